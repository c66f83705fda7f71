package io.ordertimeout.outbox;

import java.time.Duration;
import java.util.Map;

/**
 * Tunables of the outbox relay (OTC_OUTBOX_*), validated once.
 *
 * @param batch rows per read; 500 = one stream script call, 50 PutEvents calls
 * @param lease how long a relay holds a destination without renewing it; it renews every pass (at
 *     most {@code poll} apart plus one batch's work), so 30 s only runs out for a relay that died
 *     or stalled, and a successor waits at most that long
 * @param poll wait after a pass that found nothing: 200 ms keeps a cancel's relay lag under a
 *     quarter second for one indexed read per poll (~5 queries a second)
 * @param cancelRedeliverAfter a cancel whose order is still UNPAID this long after it was last put
 *     on the stream is put on it again; above the stream's 30 s visibility, so a consumer's own
 *     retries of a live entry come first
 * @param retention relayed rows older than this are deleted (7 days: the audit timeline of a week
 *     of orders; downstream keeps its own history)
 * @param retentionBatch rows per DELETE, so one statement holds its locks for milliseconds
 * @param busName the EventBridge bus, or null for none (local runs, tests of the stream alone)
 * @param source the EventBridge source of every event
 */
public record RelaySettings(
    int batch,
    Duration lease,
    Duration poll,
    Duration cancelRedeliverAfter,
    Duration retention,
    int retentionBatch,
    String busName,
    String source) {

  public RelaySettings {
    require(batch >= 1 && batch <= 5_000, "OTC_OUTBOX_BATCH must be 1..5000, was " + batch);
    require(lease.toMillis() >= 1_000, "OTC_OUTBOX_LEASE_MS must be at least 1000, was " + lease);
    require(
        poll.toMillis() >= 1 && poll.compareTo(lease) < 0,
        "OTC_OUTBOX_POLL_MS must be positive and under the lease, was " + poll);
    require(
        !cancelRedeliverAfter.isNegative(),
        "OTC_OUTBOX_CANCEL_REDELIVER_MS must not be negative, was " + cancelRedeliverAfter);
    require(
        retention.toHours() >= 1,
        "OTC_OUTBOX_RETENTION_HOURS must be at least 1, was " + retention);
    require(
        retentionBatch >= 1 && retentionBatch <= 10_000,
        "OTC_OUTBOX_RETENTION_BATCH must be 1..10000, was " + retentionBatch);
    require(source != null && !source.isBlank(), "OTC_OUTBOX_SOURCE must not be blank");
  }

  public static RelaySettings defaults() {
    return new RelaySettings(
        500,
        Duration.ofSeconds(30),
        Duration.ofMillis(200),
        Duration.ofSeconds(60),
        Duration.ofDays(7),
        1_000,
        null,
        "order-timeout.orders");
  }

  /** Reads OTC_OUTBOX_* (and OTC_EVENT_BUS_NAME); unset names keep the defaults. */
  public static RelaySettings fromEnvironment(Map<String, String> env) {
    RelaySettings d = defaults();
    String bus = env.get("OTC_EVENT_BUS_NAME");
    return new RelaySettings(
        intOf(env, "OTC_OUTBOX_BATCH", d.batch()),
        Duration.ofMillis(intOf(env, "OTC_OUTBOX_LEASE_MS", (int) d.lease().toMillis())),
        Duration.ofMillis(intOf(env, "OTC_OUTBOX_POLL_MS", (int) d.poll().toMillis())),
        Duration.ofMillis(
            intOf(
                env, "OTC_OUTBOX_CANCEL_REDELIVER_MS", (int) d.cancelRedeliverAfter().toMillis())),
        Duration.ofHours(intOf(env, "OTC_OUTBOX_RETENTION_HOURS", (int) d.retention().toHours())),
        intOf(env, "OTC_OUTBOX_RETENTION_BATCH", d.retentionBatch()),
        bus == null || bus.isBlank() ? null : bus,
        env.getOrDefault("OTC_OUTBOX_SOURCE", d.source()));
  }

  public RelaySettings withBus(String bus) {
    return new RelaySettings(
        batch, lease, poll, cancelRedeliverAfter, retention, retentionBatch, bus, source);
  }

  public RelaySettings withBatch(int b) {
    return new RelaySettings(
        b, lease, poll, cancelRedeliverAfter, retention, retentionBatch, busName, source);
  }

  public RelaySettings withLease(Duration l) {
    return new RelaySettings(
        batch, l, poll, cancelRedeliverAfter, retention, retentionBatch, busName, source);
  }

  public RelaySettings withCancelRedeliverAfter(Duration d) {
    return new RelaySettings(batch, lease, poll, d, retention, retentionBatch, busName, source);
  }

  public RelaySettings withRetention(Duration age, int rowsPerBatch) {
    return new RelaySettings(
        batch, lease, poll, cancelRedeliverAfter, age, rowsPerBatch, busName, source);
  }

  private static int intOf(Map<String, String> env, String name, int fallback) {
    String v = env.get(name);
    if (v == null || v.isBlank()) {
      return fallback;
    }
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "invalid configuration: " + name + " must be an integer, was '" + v + "'", e);
    }
  }

  private static void require(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException("invalid configuration: " + message);
    }
  }
}
