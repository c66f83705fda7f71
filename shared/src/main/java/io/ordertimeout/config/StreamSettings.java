package io.ordertimeout.config;

import java.time.Duration;

/**
 * Tunables of the event stream and its consumers; OtcConfig reads them (OTC_STREAM_*) and says why
 * each default is what it is.
 *
 * @param maxLen approximate bound of the stream (MAXLEN ~)
 * @param batch entries per XREADGROUP / XAUTOCLAIM
 * @param block how long one blocking read waits for new entries
 * @param visibility idle time after which another consumer claims a pending entry
 * @param maxDeliveries deliveries after which a failing entry is dead-lettered
 * @param consumerSlots the size of the consumer-name pool (and so of concurrent consumers)
 * @param runs consumer runs expected live at once; an older run hands over to that many newer ones
 */
public record StreamSettings(
    int maxLen,
    int batch,
    Duration block,
    Duration visibility,
    int maxDeliveries,
    int consumerSlots,
    int runs) {

  public StreamSettings {
    require(maxLen >= 1_000, "OTC_STREAM_MAXLEN must be at least 1000, was " + maxLen);
    require(batch >= 1 && batch <= 1_000, "OTC_STREAM_BATCH must be 1..1000, was " + batch);
    require(
        block.toMillis() >= 1 && block.toMillis() <= 1_500,
        "OTC_STREAM_BLOCK_MS must be 1..1500 (under the 2 s Redis command timeout), was "
            + block.toMillis());
    require(
        visibility.toMillis() >= 100,
        "OTC_STREAM_VISIBILITY_MS must be at least 100, was " + visibility.toMillis());
    require(
        maxDeliveries >= 1 && maxDeliveries <= 100,
        "OTC_STREAM_MAX_DELIVERIES must be 1..100, was " + maxDeliveries);
    require(
        consumerSlots >= 1 && consumerSlots <= 256,
        "OTC_STREAM_CONSUMER_SLOTS must be 1..256, was " + consumerSlots);
    require(
        runs >= 1 && runs <= consumerSlots,
        "OTC_STREAM_RUNS must be 1..OTC_STREAM_CONSUMER_SLOTS ("
            + consumerSlots
            + "), was "
            + runs);
  }

  /** One consumer run at a time. */
  public StreamSettings(
      int maxLen,
      int batch,
      Duration block,
      Duration visibility,
      int maxDeliveries,
      int consumerSlots) {
    this(maxLen, batch, block, visibility, maxDeliveries, consumerSlots, 1);
  }

  public StreamSettings withVisibility(Duration d) {
    return new StreamSettings(maxLen, batch, block, d, maxDeliveries, consumerSlots, runs);
  }

  public StreamSettings withMaxDeliveries(int m) {
    return new StreamSettings(maxLen, batch, block, visibility, m, consumerSlots, runs);
  }

  public StreamSettings withBatch(int b) {
    return new StreamSettings(maxLen, b, block, visibility, maxDeliveries, consumerSlots, runs);
  }

  public StreamSettings withConsumerSlots(int n) {
    return new StreamSettings(
        maxLen, batch, block, visibility, maxDeliveries, n, Math.min(runs, n));
  }

  public StreamSettings withRuns(int n) {
    return new StreamSettings(maxLen, batch, block, visibility, maxDeliveries, consumerSlots, n);
  }

  private static void require(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException("invalid configuration: " + message);
    }
  }
}
