package io.ordertimeout.cluster;

import io.ordertimeout.embedded.EmbeddedRedisCluster;
import io.ordertimeout.sweep.SweepStats;
import io.ordertimeout.sweep.TimeoutSweeper;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;

/**
 * The cluster tests' shared parts: one 3-master cluster for the JVM (started on first use, stopped
 * at exit; tests isolate themselves by key prefix as on the single server) and the sweep helpers.
 * The restart test starts a cluster of its own so its restarts never hit another class.
 */
final class ClusterFixture {
  /** Own threads: the common pool has one thread on a 2-core machine. */
  static final ExecutorService THREADS = Executors.newCachedThreadPool();

  private static EmbeddedRedisCluster shared;

  private ClusterFixture() {}

  static synchronized EmbeddedRedisCluster shared() {
    if (shared == null) {
      EmbeddedRedisCluster cluster = EmbeddedRedisCluster.start(3);
      Runtime.getRuntime().addShutdownHook(new Thread(cluster::close, "otc-cluster-shutdown"));
      shared = cluster;
    }
    return shared;
  }

  static long unpaid(TestStack stack) {
    return stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'");
  }

  /** Runs a sweep in the background until {@code done} holds (checked every 100 ms) or limit. */
  static CompletableFuture<SweepStats> sweepUntil(
      TestStack stack, Duration limit, BooleanSupplier done) {
    long until = System.currentTimeMillis() + limit.toMillis();
    TimeoutSweeper sweeper = stack.app().newSweeper();
    CompletableFuture<SweepStats> run =
        CompletableFuture.supplyAsync(
            () -> sweeper.run(() -> until - System.currentTimeMillis()), THREADS);
    return CompletableFuture.supplyAsync(
        () -> {
          awaitUntil(until, done);
          sweeper.terminate();
          return run.join();
        },
        THREADS);
  }

  static SweepStats sweepUntilDrained(TestStack stack, Duration limit) {
    return sweepUntil(stack, limit, () -> unpaid(stack) == 0).join();
  }

  /** Polls {@code condition} every 100 ms until it holds or the wall clock passes {@code until}. */
  static boolean awaitUntil(long until, BooleanSupplier condition) {
    Duration left = Duration.ofMillis(Math.max(1, until - System.currentTimeMillis()));
    return Await.reached(
            Await.await("the cluster test's condition", left).pollInterval(Duration.ofMillis(100)),
            condition::getAsBoolean)
        || condition.getAsBoolean();
  }

  /** For the outage itself (a master kept down), never for waiting on an outcome. */
  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
