package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.ordertimeout.compensation.CompensationReport;
import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * An ElastiCache-style failover under the mixed workload. The harness's own Redis is the primary; a
 * second redis-server replicates it through a {@link FaultProxy} (the replication link), and the
 * stack reaches the primary through another proxy (the primary endpoint's DNS name). The failover,
 * as ElastiCache runs it: replication lags (the link is black-holed for 1.5 s, so the primary
 * acknowledges writes the replica never gets), the primary's node dies, 2 s pass while the failure
 * is detected, the replica is promoted ({@code REPLICAOF NO ONE}) and the endpoint's name moves to
 * it (the proxy is re-pointed and its connections to the dead node reset).
 *
 * <p>Redis loses the acknowledged but unreplicated writes (timers of orders placed in the lag, the
 * stream entries relayed then). MySQL is the truth (docs/concepts/design.md, invariants): one
 * compensation pass, run at the fault's end (every 5 min in template.yaml), re-adds every UNPAID
 * order's missing timer. The test asserts that the fault really lost acknowledged timers, that
 * compensation rescheduled them, that each of those orders ends CLOSED TIMEOUT, and that no order
 * is lost and no invariant broken (a CLOSED order has exactly one RELEASE per item: closed once).
 *
 * <p>Behind {@code -Dotc.faults.all=true} (about 20 s and a second redis-server).
 */
@EnabledIfSystemProperty(named = "otc.faults.all", matches = "true")
@Tag("integration")
class RedisFailoverTest {
  /** The replication lag the failover loses: 1.5 s of writes (6 canaries' timers at least). */
  static final long REPLICATION_LAG_MS = 1_500;

  /** ElastiCache detects a dead primary in seconds before it promotes (emulated, not measured). */
  static final long DETECTION_BEFORE_PROMOTION_MS = 2_000;

  /** ShardLeaseSet.SHARD_LEASE (package-private in sweep): the recovery bound it sets. */
  static final double SHARD_LEASE_SECONDS = 10;

  static FaultHarness h;

  @BeforeAll
  static void start() {
    h = FaultHarness.start();
  }

  @AfterAll
  static void stop() {
    h.close();
  }

  @Test
  void replicaPromotedAndEndpointMovedLosesNoOrderAndCompensationReAddsTheLostTimers() {
    int oldPrimary = h.redis.port();
    RedisClient admin = RedisClient.create();
    Set<String> unreplicated = new HashSet<>();
    List<String> missingTimers = new ArrayList<>();
    AtomicReference<CompensationReport> compensation = new AtomicReference<>();
    AtomicLong streamEntriesLost = new AtomicLong();
    AtomicLong lagBytes = new AtomicLong();
    AtomicLong connectionsBeforeMove = new AtomicLong();
    AtomicLong inheritedLeaseMs = new AtomicLong();
    List<String> missingAfterCompensation = new ArrayList<>();
    List<String> finalStates = new ArrayList<>();
    List<String> closedTwice = new ArrayList<>();
    try (FaultProxy replication = FaultProxy.to(oldPrimary);
        OwnRedis replica = OwnRedis.startReplicaOf(replication.port());
        FaultProxy endpoint = FaultProxy.to(oldPrimary);
        StatefulRedisConnection<String, String> primaryAdmin = admin.connect(uri(oldPrimary));
        StatefulRedisConnection<String, String> replicaAdmin = admin.connect(uri(replica.port()))) {
      RedisCommands<String, String> newPrimary = replicaAdmin.sync();
      Await.until(
          "the replica in sync with the primary",
          Duration.ofSeconds(30),
          () -> newPrimary.info("replication").contains("master_link_status:up"));
      h.atEnd =
          stack -> {
            for (String id : missingTimers) {
              finalStates.addAll(
                  stack.dump(
                      "SELECT order_id, status, close_reason FROM orders WHERE order_id = '"
                          + id
                          + "'"));
            }
            closedTwice.addAll(
                stack.dump(
                    "SELECT order_id, COUNT(*) FROM outbox WHERE event_type = 'closed'"
                        + " GROUP BY order_id HAVING COUNT(*) > 1"));
          };
      FaultHarness.Outcome outcome =
          h.run(
              "Redis failover: replica promoted, endpoint moved",
              false,
              env -> {
                env.put("OTC_REDIS_URI", "redis://127.0.0.1:" + endpoint.port());
                return env;
              },
              null,
              ctx -> {},
              (stack, probe) -> {
                // fault timing, not a wait: the failover starts 1 s into the workload
                Workers.pause(1_000);
                probe.faultStarts();
                replication.blackHole(true);
                // the replication lag itself, not a wait for an outcome
                Workers.pause(REPLICATION_LAG_MS);
                Set<String> onOldPrimary = timers(primaryAdmin.sync(), stack);
                long oldStream = primaryAdmin.sync().xlen(stack.app().stream().key());
                lagBytes.set(
                    offset(primaryAdmin.sync(), "master_repl_offset")
                        - offset(newPrimary, "slave_repl_offset"));
                // the node dies with what it never replicated: the link is reset first, since
                // healing the black hole (as close() does) would deliver the held bytes
                replication.dropAll();
                h.redis.kill();
                replication.close();
                // ElastiCache's detection before it promotes, not a wait for an outcome
                Workers.pause(DETECTION_BEFORE_PROMOTION_MS);
                newPrimary.replicaofNoOne();
                inheritedLeaseMs.set(longestShardLease(newPrimary, stack));
                connectionsBeforeMove.set(endpoint.connections());
                endpoint.repoint(replica.port());
                endpoint.dropAll();
                probe.faultEnds();
                unreplicated.addAll(onOldPrimary);
                unreplicated.removeAll(timers(newPrimary, stack));
                streamEntriesLost.set(oldStream - newPrimary.xlen(stack.app().stream().key()));
                missingTimers.addAll(unpaidWithoutTimer(stack, newPrimary));
                probe.restoredByCompensation(missingTimers);
                compensation.set(stack.app().newCompensator(CompensationSettings.defaults()).run());
                List<String> after = unpaidWithoutTimer(stack, newPrimary);
                missingAfterCompensation.addAll(
                    missingTimers.stream().filter(after::contains).toList());
              },
              SHARD_LEASE_SECONDS,
              "bound: the 10 s sweep shard leases the promoted node inherited from invocations"
                  + " whose release or hand-over the failover lost (ShardLeaseSet), while orders whose"
                  + " timers the lag lost are left out, compensation's 5 min period bounds them");
      String lost =
          unreplicated.size()
              + " timers acknowledged by the old primary not replicated ("
              + lagBytes.get()
              + " bytes of lag), "
              + streamEntriesLost.get()
              + " stream entries lost; "
              + missingTimers.size()
              + " UNPAID orders without a timer after the failover, "
              + compensation.get().count("rescheduled")
              + " rescheduled by one compensation pass; shard leases inherited by the new"
              + " primary: "
              + inheritedLeaseMs.get()
              + " ms left at most";
      ReliabilityTable.appendNote("Redis failover: replica promoted, endpoint moved", lost);
      h.table.get("Redis failover: replica promoted, endpoint moved").put("injected", lost);

      assertThat(unreplicated).as("timers the old primary acknowledged and lost").isNotEmpty();
      assertThat(missingTimers).as("UNPAID orders the failover left without a timer").isNotEmpty();
      assertThat(compensation.get().count("rescheduled"))
          .as("timers compensation re-added")
          .isPositive();
      assertThat(missingAfterCompensation)
          .as("UNPAID orders still without a timer after the compensation pass")
          .isEmpty();
      assertThat(endpoint.connections())
          .as("clients reconnected through the moved endpoint")
          .isGreaterThan(connectionsBeforeMove.get());
      assertThat(finalStates)
          .as("the orders whose timers the failover lost, once drained")
          .hasSize(missingTimers.size())
          .allMatch(s -> s.endsWith("|CLOSED|TIMEOUT|"));
      assertThat(closedTwice).as("orders with more than one closed event").isEmpty();
      assertThat(outcome.lost()).as("orders lost (still UNPAID)").isEmpty();
      assertThat(outcome.wrongFinalStates()).as("orders in the wrong final state").isEmpty();
      assertThat(outcome.closedEarly()).as("orders closed before their deadline").isZero();
      assertThat(outcome.paidAfterClose()).as("paid-after-close cases").isZero();
      assertThat(outcome.invariantViolations()).as("invariant violations").isEmpty();
    } finally {
      h.atEnd = null;
      admin.shutdown(Duration.ZERO, Duration.ofSeconds(1));
      h.redis.startAgain(); // the harness's Redis back (empty) for its close
    }
  }

  private static RedisURI uri(int port) {
    return RedisURI.create("redis://127.0.0.1:" + port);
  }

  private static long offset(RedisCommands<String, String> redis, String field) {
    for (String line : redis.info("replication").split("\r?\n")) {
      if (line.startsWith(field + ":")) {
        return Long.parseLong(line.substring(field.length() + 1).trim());
      }
    }
    throw new IllegalStateException("INFO replication has no " + field);
  }

  /**
   * The longest time left on a sweep shard lease the promoted node holds: leases replicated before
   * the lag, of invocations whose release or hand-over the failover lost.
   */
  private static long longestShardLease(RedisCommands<String, String> redis, TestStack stack) {
    TimerIndex index = stack.app().timers();
    long longest = 0;
    for (int shard = 0; shard < index.shards(); shard++) {
      longest = Math.max(longest, redis.pttl(index.leaseKey(shard)));
    }
    return longest;
  }

  /** Every timer member of every shard on one node. */
  private static Set<String> timers(RedisCommands<String, String> redis, TestStack stack) {
    TimerIndex index = stack.app().timers();
    Set<String> members = new HashSet<>();
    for (int shard = 0; shard < index.shards(); shard++) {
      members.addAll(
          redis.zrange(
              index.timersKey(TenantIds.DEFAULT, shard, DeadlineKind.PAYMENT_TIMEOUT), 0, -1));
    }
    return members;
  }

  /** UNPAID orders in MariaDB (the truth) whose timer the given node does not hold. */
  private static List<String> unpaidWithoutTimer(
      TestStack stack, RedisCommands<String, String> redis) {
    Set<String> held = timers(redis, stack);
    List<String> missing = new ArrayList<>();
    for (String row : stack.dump("SELECT order_id FROM orders WHERE status = 'UNPAID'")) {
      String id = row.split("\\|")[0];
      if (!held.contains(id)) {
        missing.add(id);
      }
    }
    return missing;
  }
}
