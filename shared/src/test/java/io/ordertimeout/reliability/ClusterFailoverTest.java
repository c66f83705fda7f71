package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.ordertimeout.compensation.CompensationReport;
import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.EmbeddedRedisCluster;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * An ElastiCache-style failover in cluster mode, under the mixed workload. The stack runs on an
 * embedded 3-master Redis Cluster (Lettuce's RedisClusterClient, 8 timer shards over the masters);
 * one master that serves timer shards gets a replica. The failover as ElastiCache runs it on a
 * primary failure: replication lags (the replica's link is cut and its resync refused for 1.5 s, so
 * the master acknowledges writes the replica never gets), the master's process is killed, 4 s pass
 * while the failure is detected, and the replica is promoted with {@code CLUSTER FAILOVER
 * TAKEOVER}. Nothing moves an endpoint: the clients must find the new master themselves, from the
 * cluster's topology (RedisConnector's topology refresh).
 *
 * <p>4 s of detection is longer than Lettuce's first adaptive refresh (~0.8 s after the kill in
 * four runs; later ones at most every 5 s, its adaptive timeout), so the clients' first look at the
 * topology still shows the dead master serving the slots and they must look again. The replica is
 * set to {@code cluster-replica-no-failover yes} so that the cluster's own failover (after the 2 s
 * node timeout) does not promote it before the test does.
 *
 * <p>Asserted: closes resume on the shards whose slots moved (TIMEOUT closes of orders on those
 * shards after the promotion), acknowledged timers really were lost, one compensation pass re-adds
 * every missing one from MariaDB and those orders end CLOSED TIMEOUT, no order lost, each closed
 * order has exactly one {@code closed} event, invariants hold.
 *
 * <p>Behind {@code -Dotc.faults.all=true} (about 30 s, a cluster of 4 redis-servers).
 */
@EnabledIfSystemProperty(named = "otc.faults.all", matches = "true")
@Tag("integration")
class ClusterFailoverTest {
  static final String FAULT = "Redis Cluster failover: replica promoted (TAKEOVER)";

  /** The replication lag the failover loses: 1.5 s of writes (6 canaries' timers at least). */
  static final long REPLICATION_LAG_MS = 1_500;

  /** Detection before the promotion (emulated): past Lettuce's first adaptive refresh, ~0.8 s. */
  static final long DETECTION_BEFORE_PROMOTION_MS = 4_000;

  /** 8 shards over 3 masters: the failed master serves some for sure (asserted). */
  static final int SHARDS = 8;

  /**
   * The bound: ShardLeaseSet's 10 s shard lease (as in RedisFailoverTest) which the promoted node
   * inherits from invocations whose release the failover lost.
   */
  static final double SHARD_LEASE_SECONDS = 10;

  /**
   * Orders placed on the moved shards just before the fault, due 3 s later: their timers are
   * replicated (placed before the cut) and come due while the master is dead, so their closes wait
   * for the promotion and for the clients to follow it, and the recovery column sees that wait (the
   * canaries placed in the fault lose their ZADD on those shards and are left out of it).
   */
  static final int DUE_IN_OUTAGE = 4;

  static final int DUE_IN_OUTAGE_SECONDS = 3;

  /**
   * Orders placed on the moved shards inside the replication lag: the old master acknowledges their
   * timers and never replicates them, so the failover loses them for sure (the canaries alone put
   * ~1.5 timers on 2 of 8 shards in 1.5 s, and none in some runs).
   */
  static final int PLACED_IN_LAG = 3;

  static FaultHarness h;
  static EmbeddedRedisCluster cluster;

  @BeforeAll
  static void start() {
    h = FaultHarness.start();
    cluster = EmbeddedRedisCluster.start(3);
  }

  @AfterAll
  static void stop() {
    try {
      h.close();
    } finally {
      cluster.close();
    }
  }

  @Test
  void replicaPromotedWithTakeoverIsFollowedByTheClientsAndLosesNoOrder() {
    RedisClient admin = RedisClient.create();
    AtomicInteger failed = new AtomicInteger(-1);
    AtomicInteger replicaPort = new AtomicInteger();
    Set<Integer> movedShards = new HashSet<>();
    Set<String> unreplicated = new HashSet<>();
    List<String> missingTimers = new ArrayList<>();
    AtomicReference<CompensationReport> compensation = new AtomicReference<>();
    AtomicLong lagBytes = new AtomicLong();
    AtomicLong followedMs = new AtomicLong();
    AtomicReference<String> promotedAt = new AtomicReference<>();
    List<String> missingAfterCompensation = new ArrayList<>();
    List<String> finalStates = new ArrayList<>();
    List<String> closedTwice = new ArrayList<>();
    List<String> closedOnMovedShards = new ArrayList<>();
    List<String> dueInOutage = new ArrayList<>();
    List<String> placedInLag = new ArrayList<>();
    List<String> outageCloses = new ArrayList<>();
    AtomicLong faultStart = new AtomicLong();
    AtomicLong killedAtMs = new AtomicLong();
    List<String> dueInOutageStates = new ArrayList<>();
    AtomicLong killToPromotedMs = new AtomicLong();
    try {
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
            for (String id : dueInOutage) {
              outageCloses.addAll(
                  stack.dump(
                      "SELECT TIMESTAMPDIFF(MICROSECOND, '"
                          + promotedAt.get()
                          + "', closed_at) DIV 1000 FROM orders WHERE order_id = '"
                          + id
                          + "'"));
              dueInOutageStates.addAll(
                  stack.dump(
                      "SELECT order_id, status, close_reason FROM orders WHERE order_id = '"
                          + id
                          + "'"));
            }
            TimerIndex index = stack.app().timers();
            for (String row :
                stack.dump(
                    "SELECT order_id FROM orders WHERE status = 'CLOSED'"
                        + " AND close_reason = 'TIMEOUT' AND closed_at > '"
                        + promotedAt.get()
                        + "'")) {
              String id = row.split("\\|")[0];
              if (movedShards.contains(index.shardOf(id))) {
                closedOnMovedShards.add(id);
              }
            }
          };
      FaultHarness.Outcome outcome =
          h.run(
              FAULT,
              false,
              env -> {
                env.put("OTC_REDIS_URI", cluster.uri());
                env.put("OTC_REDIS_CLUSTER", "true");
                env.put("OTC_TIMER_SHARDS", String.valueOf(SHARDS));
                return env;
              },
              stack -> {
                // the master that fails: the one of masters 1 and 2 with most timer shards (not
                // master 0, the stack's seed URI, which ElastiCache's configuration endpoint is)
                Map<Integer, Set<Integer>> shardsOf = shardsPerMaster(stack.app().timers());
                failed.set(shardsOf.get(1).size() >= shardsOf.get(2).size() ? 1 : 2);
                movedShards.addAll(shardsOf.get(failed.get()));
                replicaPort.set(cluster.addReplica(failed.get()));
              },
              (stack, probe) -> {
                int masterPort = cluster.masterPorts().get(failed.get());
                try (StatefulRedisConnection<String, String> masterAdmin =
                        admin.connect(uri(masterPort));
                    StatefulRedisConnection<String, String> replicaAdmin =
                        admin.connect(uri(replicaPort.get()))) {
                  RedisCommands<String, String> master = masterAdmin.sync();
                  RedisCommands<String, String> replica = replicaAdmin.sync();
                  // only the test's TAKEOVER promotes it, not the cluster after its node timeout
                  replica.configSet("cluster-replica-no-failover", "yes");
                  // fault timing, not a wait: the failover starts 1 s into the workload
                  Workers.pause(1_000);
                  dueInOutage.addAll(placeOnShards(stack, movedShards, "outage", DUE_IN_OUTAGE));
                  probe.faultStarts();
                  faultStart.set(System.nanoTime());
                  // the replication lag: the link is cut and its resync refused, the master
                  // keeps acknowledging writes the replica does not get
                  master.dispatch(
                      CommandType.ACL,
                      new StatusOutput<>(StringCodec.UTF8),
                      new CommandArgs<>(StringCodec.UTF8)
                          .add("SETUSER")
                          .add("default")
                          .add("-psync")
                          .add("-sync"));
                  master.clientKill(KillArgs.Builder.typeSlave());
                  placedInLag.addAll(placeOnShards(stack, movedShards, "lagged", PLACED_IN_LAG));
                  // the rest of the lag itself, not a wait for an outcome
                  Workers.pause(
                      Math.max(
                          0,
                          REPLICATION_LAG_MS - (System.nanoTime() - faultStart.get()) / 1_000_000));
                  Set<String> onOldMaster = timers(master, stack.app().timers(), movedShards);
                  lagBytes.set(
                      offset(master, "master_repl_offset") - offset(replica, "slave_repl_offset"));
                  cluster.stopMaster(failed.get(), false); // SIGKILL: a crash
                  long killed = System.nanoTime();
                  killedAtMs.set((killed - faultStart.get()) / 1_000_000);
                  // ElastiCache's detection before it promotes, not a wait for an outcome
                  Workers.pause(DETECTION_BEFORE_PROMOTION_MS);
                  cluster.promoteReplica(failed.get(), replicaPort.get());
                  killToPromotedMs.set((System.nanoTime() - killed) / 1_000_000);
                  promotedAt.set(stack.dump("SELECT NOW(3)").get(0).split("\\|")[0]);
                  probe.faultEnds();
                  long promoted = System.nanoTime();
                  awaitClientsFollow(stack, movedShards);
                  followedMs.set((System.nanoTime() - promoted) / 1_000_000);
                  unreplicated.addAll(onOldMaster);
                  unreplicated.removeAll(timers(replica, stack.app().timers(), movedShards));
                  missingTimers.addAll(unpaidWithoutTimer(stack));
                  probe.restoredByCompensation(missingTimers);
                  compensation.set(
                      stack.app().newCompensator(CompensationSettings.defaults()).run());
                  List<String> after = unpaidWithoutTimer(stack);
                  missingAfterCompensation.addAll(
                      missingTimers.stream().filter(after::contains).toList());
                }
              },
              SHARD_LEASE_SECONDS,
              "bound: the 10 s sweep shard leases the promoted node inherited from invocations"
                  + " whose release the failover lost (ShardLeaseSet), as in the endpoint"
                  + " failover, and within it the clients' follow: Lettuce's 5 s adaptive refresh"
                  + " timeout (RedisConnector enables every adaptive trigger, the dead node's"
                  + " reconnect attempts fire one) + the 2 s command timeout of a command in flight"
                  + " to the dead node; orders whose timers the lag lost are"
                  + " left out, compensation's 5 min period bounds them");
      String notes =
          "shards "
              + movedShards
              + " of "
              + SHARDS
              + " moved; master killed "
              + killedAtMs.get()
              + " ms into the fault, replica promoted "
              + killToPromotedMs.get()
              + " ms after the master was killed; orders on the moved shards due in the outage"
              + " closed "
              + String.join("/", outageCloses).replace("|", "")
              + " ms after the promotion (stack's client answering there after "
              + followedMs.get()
              + " ms); "
              + unreplicated.size()
              + " timers acknowledged by the old master not replicated ("
              + lagBytes.get()
              + " bytes of lag); "
              + missingTimers.size()
              + " UNPAID orders without a timer, "
              + compensation.get().count("rescheduled")
              + " rescheduled by one compensation pass; "
              + closedOnMovedShards.size()
              + " TIMEOUT closes on the moved shards after the promotion";
      ReliabilityTable.appendNote(FAULT, notes);
      h.table.get(FAULT).put("injected", notes);

      assertThat(movedShards).as("timer shards on the master that failed").isNotEmpty();
      assertThat(closedOnMovedShards)
          .as("TIMEOUT closes on the moved shards after the promotion")
          .isNotEmpty();
      assertThat(dueInOutageStates)
          .as("orders on the moved shards due while the master was dead")
          .hasSize(DUE_IN_OUTAGE)
          .allMatch(st -> st.endsWith("|CLOSED|TIMEOUT|"));
      assertThat(unreplicated)
          .as("timers the old master acknowledged and lost")
          .containsAll(placedInLag);
      assertThat(missingTimers).as("UNPAID orders the failover left without a timer").isNotEmpty();
      assertThat(compensation.get().count("rescheduled"))
          .as("timers compensation re-added")
          .isPositive();
      assertThat(missingAfterCompensation)
          .as("UNPAID orders still without a timer after the compensation pass")
          .isEmpty();
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
    }
  }

  /**
   * Waits until the stack's own client (RedisConnector's, as a Lambda holds it) answers on every
   * moved shard: its topology holds the promoted node. A command routed to the dead node fails
   * (connection refused, or the 2 s command timeout), so this polls until none does.
   */
  private static void awaitClientsFollow(TestStack stack, Set<Integer> shards) {
    TimerIndex index = stack.app().timers();
    Await.await("the stack's client serving the moved shards", Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(100))
        .ignoreExceptions()
        .until(
            () -> {
              for (int shard : shards) {
                stack
                    .app()
                    .redis()
                    .sync()
                    .zcard(index.timersKey(TenantIds.DEFAULT, shard, DeadlineKind.PAYMENT_TIMEOUT));
              }
              return true;
            });
  }

  /** Places {@code count} orders, due in 3 s, whose timers land on {@code shards}. */
  private static List<String> placeOnShards(
      TestStack stack, Set<Integer> shards, String tag, int count) {
    TimerIndex index = stack.app().timers();
    List<String> ids = new ArrayList<>();
    for (int i = 0; ids.size() < count; i++) {
      String id = stack.app().config().keyPrefix() + "-" + tag + "-" + i;
      if (shards.contains(index.shardOf(id))) {
        stack.place(id, tag, DUE_IN_OUTAGE_SECONDS, null, new OrderItem(FaultWorkload.SKU, 1));
        ids.add(id);
      }
    }
    return ids;
  }

  /** Master index to the timer shards whose key slot it serves. */
  private static Map<Integer, Set<Integer>> shardsPerMaster(TimerIndex index) {
    List<Integer> ports = cluster.masterPorts();
    Map<Integer, Set<Integer>> shards = new HashMap<>();
    for (int i = 0; i < ports.size(); i++) {
      shards.put(i, new HashSet<>());
    }
    for (int shard = 0; shard < index.shards(); shard++) {
      int port =
          cluster.portOfSlot(
              cluster.keySlot(
                  index.timersKey(TenantIds.DEFAULT, shard, DeadlineKind.PAYMENT_TIMEOUT)));
      shards.get(ports.indexOf(port)).add(shard);
    }
    return shards;
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

  /** Every timer member of the given shards on one node (the node serving them). */
  private static Set<String> timers(
      RedisCommands<String, String> node, TimerIndex index, Set<Integer> shards) {
    Set<String> members = new HashSet<>();
    for (int shard : shards) {
      members.addAll(
          node.zrange(
              index.timersKey(TenantIds.DEFAULT, shard, DeadlineKind.PAYMENT_TIMEOUT), 0, -1));
    }
    return members;
  }

  /** UNPAID orders in MariaDB (the truth) whose timer no live master holds. */
  private static List<String> unpaidWithoutTimer(TestStack stack) {
    TimerIndex index = stack.app().timers();
    Set<String> held = new HashSet<>();
    RedisClient reader = RedisClient.create();
    try {
      Map<Integer, Set<Integer>> shardsOf = shardsPerMaster(index);
      List<Integer> ports = cluster.masterPorts();
      for (int i = 0; i < ports.size(); i++) {
        try (StatefulRedisConnection<String, String> c = reader.connect(uri(ports.get(i)))) {
          held.addAll(timers(c.sync(), index, shardsOf.get(i)));
        }
      }
    } finally {
      reader.shutdown(Duration.ZERO, Duration.ofSeconds(1));
    }
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
