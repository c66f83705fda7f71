package io.ordertimeout.sweep;

/**
 * What closing a batch is expected to take, learned from this sweeper's own batches: a moving
 * average per order plus 20 ms for the round trips of any batch. The sweep compares it with the
 * invocation's remaining time to close a batch inline or hand it to the stream. Thread-safe: the
 * closer threads of one run observe concurrently.
 */
final class CloseCostModel {
  /** Before the first batch: 1 ms an order (a 500-order batch in 0.5 s, twice a local MySQL). */
  private double millisPerOrder = 1.0;

  synchronized long estimateMillis(int orders) {
    return 20 + (long) Math.ceil(millisPerOrder * orders);
  }

  /** Exponential moving average over ~8 batches: quick to follow a slow DB, steady on noise. */
  synchronized void observe(int orders, long millis) {
    double perOrder = (double) millis / Math.max(1, orders);
    millisPerOrder = millisPerOrder * 7 / 8 + perOrder / 8;
  }
}
