package io.ordertimeout.sweep;

import io.ordertimeout.close.CloseResult;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.mysql.DataAccessException;
import io.ordertimeout.stream.OrderEvents;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What becomes of a batch of claimed timers: closed inline (and its closing time learned by the
 * {@link CloseCostModel}), or handed to the stream as close_due when the invocation has no time
 * left or the close failed transiently, or left leased to come back after the claim lease. Called
 * by the closer threads of one run at once.
 */
final class ClaimedCloser {
  // the sweep's logger: its hand-off and failure lines keep the name operators filter on
  private static final Logger log = LoggerFactory.getLogger(TimeoutSweeper.class);

  private final OrderCloser closer;
  private final OrderEvents events;
  private final Metrics metrics;
  private final CloseCostModel closeCost = new CloseCostModel();

  ClaimedCloser(OrderCloser closer, OrderEvents events, Metrics metrics) {
    this.closer = closer;
    this.events = events;
    this.metrics = metrics;
  }

  /** What closing {@code orders} inline is expected to take, from this sweeper's batches. */
  long estimateMillis(int orders) {
    return closeCost.estimateMillis(orders);
  }

  void close(String tenantId, List<String> claimed, SweepCounters counters) {
    long started = System.nanoTime();
    try {
      CloseResult result = closer.close(tenantId, claimed, CloseReason.TIMEOUT);
      closeCost.observe(claimed.size(), (System.nanoTime() - started) / 1_000_000);
      counters.closed.addAndGet(result.closed().size());
      counters.notDue.addAndGet(result.notDue().size());
      counters.alreadyFinal.addAndGet(result.alreadyFinal().size());
    } catch (DataAccessException e) {
      counters.failedBatches.incrementAndGet();
      metrics.count("close_batch_failures", 1);
      if (e.isTransient()) {
        handOff(tenantId, claimed, OrderEvents.HandOffCause.CLOSE_FAILED, counters);
      } else {
        leaveLeased(tenantId, claimed, e);
      }
    } catch (RuntimeException e) {
      // Not a database verdict (Redis after the commit, WeChat, a bug in one order): consumers
      // retry each order on its own and dead-letter the one that keeps failing.
      counters.failedBatches.incrementAndGet();
      metrics.count("close_batch_failures", 1);
      handOff(tenantId, claimed, OrderEvents.HandOffCause.CLOSE_FAILED, counters);
    }
  }

  /**
   * Hands claimed orders to the stream as close_due. Their timers keep the claim lease: a consumer
   * closes the order and the closer removes the timer; if no consumer does within the lease, the
   * timer comes back to a sweep, so a failed or lost hand-off loses nothing.
   */
  void handOff(
      String tenantId,
      List<String> claimed,
      OrderEvents.HandOffCause cause,
      SweepCounters counters) {
    if (events.closeDue(tenantId, claimed, cause)) {
      counters.handedOff.addAndGet(claimed.size());
      metrics.count("sweep_handed_off", claimed.size());
      log.info(
          "handed {} orders of tenant {} (first {}) to the stream ({})",
          claimed.size(),
          tenantId,
          claimed.get(0),
          cause);
    } else {
      leaveLeased(tenantId, claimed, new IllegalStateException("hand-off to the stream failed"));
    }
  }

  private void leaveLeased(String tenantId, List<String> claimed, RuntimeException e) {
    // The claimed timers keep their lease score: they come back to a claimer when it runs out.
    log.warn(
        "closing {} claimed orders of tenant {} (first {}) failed; they return after the claim"
            + " lease: {}",
        claimed.size(),
        tenantId,
        claimed.get(0),
        e.toString());
  }
}
