package io.ordertimeout.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.EmbeddedRedisCluster;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.sweep.SweepStats;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Masters of a cluster of its own go down in the middle of a sweep run: once stopped with its data
 * saved (a planned restart), once killed losing it (a crash of a master without replicas). Each is
 * held down 2.5 s, longer than the 2 s command timeout, so sweep passes really fail.
 */
@Tag("integration")
class ClusterMasterRestartTest {
  private static final Logger log = LoggerFactory.getLogger(ClusterMasterRestartTest.class);
  private static final int ORDERS = 3_000;

  /**
   * 2,000 orders due at once, then 1,000 due 20 s later: the restart hits the first wave in full
   * flow and the crash comes after it, while the second wave's timers (not due yet) sit on the
   * crashed master for sure; 20 s leaves the restart (~3 s down and rejoin on a loaded machine)
   * plenty of room.
   */
  private static final int FIRST_WAVE = 2_000;

  private static EmbeddedRedisCluster cluster;
  private TestStack stack;

  @BeforeAll
  static void startCluster() {
    cluster = EmbeddedRedisCluster.start(3);
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.assertInvariants();
      stack.close();
    }
  }

  @Test
  void aSweepRunSurvivesAMasterRestartAndAMasterCrashAndClosesEveryOrder() {
    // Arrange: two waves over 8 shards; batches of 50 keep the first wave flowing for a while
    stack =
        TestStack.createOnCluster(
            "cl-restart",
            cluster.uri(),
            c ->
                c.toBuilder()
                    .timerShards(8)
                    .sweepBatch(50)
                    .waits(c.waits().withWeChatStep(Duration.ofSeconds(2)))
                    .claimLease(Duration.ofSeconds(2))
                    .build(),
            null);
    stack.seedSku("hot", 10_000);
    stack.bulkPlace("now-", FIRST_WAVE, Duration.ofMillis(300), i -> new OrderItem("hot", 1));
    stack.bulkPlace(
        "later-", ORDERS - FIRST_WAVE, Duration.ofSeconds(20), i -> new OrderItem("hot", 1));
    List<Integer> busiest = mastersByShardCount(stack.app().timers());
    long until = System.currentTimeMillis() + 120_000;
    CompletableFuture<SweepStats> sweep =
        ClusterFixture.sweepUntil(stack, Duration.ofSeconds(120), () -> drained(stack));

    // Act 1: a planned restart (SHUTDOWN SAVE, data kept) of the master with the most shards
    ClusterFixture.awaitUntil(until, () -> closed(stack) >= 500);
    assertThat(ClusterFixture.unpaid(stack))
        .as("orders still open when the master stops")
        .isPositive();
    bounce(busiest.get(0), true);

    // Act 2: a crash (SIGKILL, data lost) of another master with shards
    ClusterFixture.awaitUntil(until, () -> closed(stack) >= 1_500);
    assertThat(ClusterFixture.unpaid(stack))
        .as("orders still open when the master dies")
        .isPositive();
    bounce(busiest.get(1), false);
    // its timers and leases are gone: re-schedule the open orders from MySQL, as compensation does
    int rescheduled = rescheduleUnpaidFromMySql(stack);

    SweepStats stats = sweep.join();

    // Assert
    log.warn(
        "cluster restart run: {} orders closed, {} re-scheduled after the crash, 2 master restarts,"
            + " sweep stats {}",
        closed(stack),
        rescheduled,
        stats);
    // the outage was seen (shards of the down master skipped, or whole passes failed), and survived
    assertThat(stats.failedBatches() + stack.app().metrics().counter("sweep_shard_errors"))
        .as("shard errors and failed passes while a master was down")
        .isPositive();
    assertThat(closed(stack)).isEqualTo(ORDERS);
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE closed_at < expire_at")).isZero();
    assertThat(
            stack.count(
                "SELECT COUNT(DISTINCT order_id) FROM stock_movements WHERE kind = 'RELEASE'"))
        .isEqualTo(ORDERS);
    assertThat(stack.dump("SELECT available, reserved, sold FROM stock WHERE sku_id = 'hot'"))
        .containsExactly("10000|0|0|");
    assertThat(stack.app().timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT)).isZero();
  }

  private static void bounce(int master, boolean keepData) {
    cluster.stopMaster(master, keepData);
    // The outage itself, not a wait for an outcome: the master stays down 2.5 s, so sweep passes
    // meet its shards unreachable (the shard errors asserted below).
    ClusterFixture.sleep(2_500);
    cluster.startMaster(master);
  }

  /** Master indexes, the one serving most timer shards first. */
  private static List<Integer> mastersByShardCount(TimerIndex timers) {
    List<Integer> ports = cluster.masterPorts();
    Map<Integer, Long> shardsPerMaster = new LinkedHashMap<>();
    IntStream.range(0, ports.size()).forEach(i -> shardsPerMaster.put(i, 0L));
    for (int shard = 0; shard < timers.shards(); shard++) {
      int port =
          cluster.portOfSlot(
              cluster.keySlot(
                  timers.timersKey(TenantIds.DEFAULT, shard, DeadlineKind.PAYMENT_TIMEOUT)));
      shardsPerMaster.merge(ports.indexOf(port), 1L, Long::sum);
    }
    return shardsPerMaster.entrySet().stream()
        .sorted(Map.Entry.<Integer, Long>comparingByValue(Comparator.reverseOrder()))
        .map(Map.Entry::getKey)
        .toList();
  }

  private static int rescheduleUnpaidFromMySql(TestStack stack) {
    Map<String, Long> deadlines = new LinkedHashMap<>();
    for (String row :
        stack.dump(
            "SELECT order_id, FLOOR(UNIX_TIMESTAMP(expire_at) * 1000) FROM orders"
                + " WHERE status = 'UNPAID'")) {
      String[] cells = row.split("\\|");
      deadlines.put(cells[0], Long.parseLong(cells[1]));
    }
    stack.app().timers().scheduleAll(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, deadlines);
    return deadlines.size();
  }

  private static long closed(TestStack stack) {
    return stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'");
  }

  /** Every order closed and every timer acked (a lost ack returns after the 2 s claim lease). */
  private static boolean drained(TestStack stack) {
    return ClusterFixture.unpaid(stack) == 0
        && stack.app().timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT) == 0;
  }
}
