package io.ordertimeout.outbox;

import io.ordertimeout.metrics.Metrics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.eventbridge.EventBridgeClient;
import software.amazon.awssdk.services.eventbridge.model.PutEventsRequest;
import software.amazon.awssdk.services.eventbridge.model.PutEventsRequestEntry;
import software.amazon.awssdk.services.eventbridge.model.PutEventsResponse;
import software.amazon.awssdk.services.eventbridge.model.PutEventsResultEntry;

/**
 * Puts outbox rows on an EventBridge bus with PutEvents: detail-type = the event type, detail = the
 * row's document, whose {@code id} subscribers deduplicate by (EventBridge itself delivers at least
 * once and assigns its own ids).
 *
 * <p>Order per order: EventBridge does not order what one call carries, so a round sends only the
 * first undelivered row of each order, and the next row of an order goes in a later round, after
 * its predecessor was accepted. A row whose entry failed (throttled, internal error) blocks its
 * order's later rows until a retry accepted it. Orders have at most three events (created,
 * cancel_requested, paid or closed), so a batch of 500 needs at most three full rounds.
 *
 * <p>Time: every call ends within the time its caller gives ({@link #publish(List, LongSupplier)}),
 * the SDK's attempts and retries included, and a call that failed whole (timed out, 5xx after the
 * SDK's retries) ends the publish: the bus is in trouble, and the next pass tries again, instead of
 * the other calls of the round each waiting out their own timeout.
 */
public final class EventBridgePublisher implements Publisher {
  private static final Logger log = LoggerFactory.getLogger(EventBridgePublisher.class);

  /** PutEvents takes at most 10 entries per call. */
  static final int MAX_ENTRIES = 10;

  /**
   * PutEvents takes at most 256 KB per call, counted as detail + detail-type + source + 14 bytes
   * per entry; 240 KB leaves room for the resources list and rounding.
   */
  static final int MAX_CALL_BYTES = 240 * 1024;

  /**
   * Rounds in a row that leave entries failed before the pass gives up and leaves them to the next
   * pass (the SDK already retried whole-call throttling with backoff inside each call).
   */
  static final int FAILED_ROUNDS = 3;

  /**
   * A call is not started with less than this left: it could not complete (PutEvents answers in
   * tens of milliseconds when healthy) and would only time out.
   */
  static final long MIN_CALL_MILLIS = 100;

  private static final LongSupplier UNBOUNDED = () -> Long.MAX_VALUE;

  private final EventBridgeClient client;
  private final String busName;
  private final String source;
  private final Metrics metrics;

  public EventBridgePublisher(
      EventBridgeClient client, String busName, String source, Metrics metrics) {
    this.client = client;
    this.busName = busName;
    this.source = source;
    this.metrics = metrics;
  }

  @Override
  public Destination destination() {
    return Destination.EVENTBRIDGE;
  }

  @Override
  public List<Long> publish(List<OutboxRow> rows) {
    return publish(rows, UNBOUNDED);
  }

  @Override
  public List<Long> publish(List<OutboxRow> rows, LongSupplier millisLeft) {
    List<OutboxRow> pending = new ArrayList<>(rows);
    List<Long> accepted = new ArrayList<>();
    int failedRounds = 0;
    while (!pending.isEmpty()) {
      List<OutboxRow> heads = headsPerOrder(pending);
      Round round = putAll(heads, millisLeft);
      pending.removeIf(r -> round.ok().contains(r.seq()));
      heads.stream().filter(r -> round.ok().contains(r.seq())).forEach(r -> accepted.add(r.seq()));
      if (round.ended()) {
        break;
      }
      if (round.ok().size() < heads.size()) {
        if (++failedRounds >= FAILED_ROUNDS || !backoff(failedRounds, millisLeft)) {
          break;
        }
      }
    }
    accepted.sort(Long::compare);
    return accepted;
  }

  /**
   * What a round got: the accepted seqs, and whether the publish must end (a call failed whole, or
   * the time ran out before every call was made).
   */
  private record Round(Set<Long> ok, boolean ended) {}

  /** The first pending row of each order, ascending seq. */
  private static List<OutboxRow> headsPerOrder(List<OutboxRow> pending) {
    Map<String, OutboxRow> heads = new LinkedHashMap<>();
    pending.forEach(r -> heads.putIfAbsent(r.orderId(), r));
    return new ArrayList<>(heads.values());
  }

  /**
   * Sends {@code heads} in calls of at most 10 entries and 240 KB, each bounded by {@code
   * millisLeft}; stops at the first call that failed whole or found no time left.
   */
  private Round putAll(List<OutboxRow> heads, LongSupplier millisLeft) {
    Set<Long> ok = new HashSet<>();
    List<List<OutboxRow>> calls = new ArrayList<>();
    List<OutboxRow> call = new ArrayList<>();
    int bytes = 0;
    for (OutboxRow row : heads) {
      int size = size(entry(row));
      if (!call.isEmpty() && (call.size() == MAX_ENTRIES || bytes + size > MAX_CALL_BYTES)) {
        calls.add(call);
        call = new ArrayList<>();
        bytes = 0;
      }
      call.add(row);
      bytes += size;
    }
    if (!call.isEmpty()) {
      calls.add(call);
    }
    for (List<OutboxRow> rows : calls) {
      Optional<List<Long>> accepted = put(rows, millisLeft.getAsLong());
      if (accepted.isEmpty()) {
        return new Round(ok, true);
      }
      ok.addAll(accepted.get());
    }
    return new Round(ok, false);
  }

  /**
   * One PutEvents ending within {@code millisLeft}; result entries come back in request order, each
   * with an id or an error. Answers empty when the call was not made (no time) or failed whole.
   */
  private Optional<List<Long>> put(List<OutboxRow> rows, long millisLeft) {
    if (millisLeft < MIN_CALL_MILLIS) {
      return Optional.empty();
    }
    List<PutEventsRequestEntry> entries = rows.stream().map(this::entry).toList();
    PutEventsResponse response;
    try {
      response =
          client.putEvents(
              PutEventsRequest.builder()
                  .entries(entries)
                  .overrideConfiguration(bounded(millisLeft))
                  .build());
    } catch (SdkException e) {
      metrics.count("outbox_bridge_call_failures", 1);
      log.warn(
          "PutEvents of {} events to bus {} failed (first seq {}, order {}): {}",
          rows.size(),
          busName,
          rows.get(0).seq(),
          rows.get(0).orderId(),
          e.toString());
      return Optional.empty();
    }
    List<Long> ok = new ArrayList<>();
    List<PutEventsResultEntry> results = response.entries();
    for (int i = 0; i < rows.size(); i++) {
      PutEventsResultEntry result = i < results.size() ? results.get(i) : null;
      if (result != null && result.errorCode() == null && result.eventId() != null) {
        ok.add(rows.get(i).seq());
      } else {
        metrics.count("outbox_bridge_entry_failures", 1);
        log.warn(
            "EventBridge refused event {} (seq {}, order {}): {} {}",
            rows.get(i).eventId(),
            rows.get(i).seq(),
            rows.get(i).orderId(),
            result == null ? "no result" : result.errorCode(),
            result == null ? "" : result.errorMessage());
      }
    }
    return Optional.of(ok);
  }

  /**
   * The call's timeouts, EventBridgeClients' (set here too, so a client built elsewhere is bounded
   * as well) cut to {@code millisLeft}.
   */
  private static AwsRequestOverrideConfiguration bounded(long millisLeft) {
    return AwsRequestOverrideConfiguration.builder()
        .apiCallTimeout(cut(EventBridgeClients.CALL_TIMEOUT, millisLeft))
        .apiCallAttemptTimeout(cut(EventBridgeClients.ATTEMPT_TIMEOUT, millisLeft))
        .build();
  }

  private static Duration cut(Duration timeout, long millisLeft) {
    return millisLeft < timeout.toMillis() ? Duration.ofMillis(millisLeft) : timeout;
  }

  private PutEventsRequestEntry entry(OutboxRow row) {
    return PutEventsRequestEntry.builder()
        .eventBusName(busName)
        .source(source)
        .detailType(row.type())
        .detail(row.document())
        .time(row.committedAt())
        .build();
  }

  private static int size(PutEventsRequestEntry e) {
    return utf8(e.detail()) + utf8(e.detailType()) + utf8(e.source()) + 14;
  }

  private static int utf8(String s) {
    return s == null ? 0 : s.getBytes(StandardCharsets.UTF_8).length;
  }

  /**
   * 100, 200 ms: spreads a retry of throttled entries past the bus's per-second quota refill.
   * Answers false, without waiting, when the wait and a call would not fit in {@code millisLeft}.
   */
  private static boolean backoff(int failedRounds, LongSupplier millisLeft) {
    long wait = 100L * Math.max(1, failedRounds);
    if (millisLeft.getAsLong() < wait + MIN_CALL_MILLIS) {
      return false;
    }
    try {
      Thread.sleep(wait);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while retrying PutEvents", e);
    }
  }
}
