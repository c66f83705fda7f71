package io.ordertimeout.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.embedded.EmbeddedRedisCluster;
import io.ordertimeout.embedded.EmbeddedServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * ScaleOutBench at 2,000 orders due over 1 s on the embedded 3-master cluster with 64 shards, 2
 * sweeper processes (child JVMs): every order closed exactly once (rows in MariaDB, one closed
 * event each, no timer left, invariants hold) with the shard leases split evenly (both processes
 * held 32 shards and closed some orders) and with the production lease rule, which now splits them
 * too (ShardLeaseSet: an even share per live run; before, the first to refresh kept all 64). Never
 * asserts a timing.
 */
class ScaleOutBenchTest {
  private static EmbeddedRedisCluster cluster;

  @BeforeAll
  static void startCluster() {
    cluster = EmbeddedRedisCluster.start(3);
  }

  @AfterAll
  static void stopCluster() {
    cluster.close();
  }

  private static ScaleOutRun.Result run(String leases) throws Exception {
    ScaleOutBench.Settings settings =
        ScaleOutBench.Settings.parse(
            new String[] {
              "--orders",
              "2000",
              "--spread-seconds",
              "1",
              "--skus",
              "50",
              "--processes",
              "2",
              "--leases",
              leases,
              "--max-drain-seconds",
              "120",
              "--log-dir",
              "target/scaleout-logs"
            });
    return new ScaleOutRun(settings, EmbeddedServers.get(), cluster, 2, leases).run();
  }

  @Test
  void twoProcessesWithAnEvenShareEachHoldShardsAndCloseEveryOrderOnce() throws Exception {
    ScaleOutRun.Result r = run(ScaleOutBench.PARTITIONED);

    assertThat(r.drained()).isTrue();
    assertThat(r.closed()).isEqualTo(2_000);
    assertThat(r.closedEvents()).isEqualTo(2_000);
    assertThat(r.lagMillis().getTotalCount()).isEqualTo(2_000);
    assertThat(r.timersLeft()).isZero();
    assertThat(r.violations()).isEmpty();
    assertThat(r.sweepers()).hasSize(2);
    assertThat(r.sweepers())
        .allSatisfy(
            p -> {
              assertThat(p.shardsHeld()).isEqualTo(32);
              assertThat(p.closed()).isPositive();
              assertThat(p.failedBatches()).isZero();
            });
    assertThat(r.sweepers().stream().mapToLong(SweeperProcess.Stats::closed).sum())
        .isEqualTo(2_000);
    assertThat(r.splits()).containsKey("32/32");
    assertThat(r.exactlyOnce()).isTrue();
    assertThat(ScaleOutRun.table(java.util.List.of(r)))
        .contains("| partitioned | 2 | 2000 |")
        .contains("| 32/32 |");
  }

  @Test
  void twoProcessesWithTheProductionLeaseRuleCloseEveryOrderOnce() throws Exception {
    ScaleOutRun.Result r = run(ScaleOutBench.PRODUCTION);

    assertThat(r.drained()).isTrue();
    assertThat(r.closed()).isEqualTo(2_000);
    assertThat(r.closedEvents()).isEqualTo(2_000);
    assertThat(r.timersLeft()).isZero();
    assertThat(r.violations()).isEmpty();
    assertThat(r.sweepers()).hasSize(2);
    // claims are atomic: what the two report closing adds up to the orders, none twice
    assertThat(r.sweepers().stream().mapToLong(SweeperProcess.Stats::closed).sum())
        .isEqualTo(2_000);
    assertThat(r.exactlyOnce()).isTrue();
    // the production rule gives each live run its share: sampled while draining, 32 and 32
    assertThat(r.splits()).containsKey("32/32");
  }
}
