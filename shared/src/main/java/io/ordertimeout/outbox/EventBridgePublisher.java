package io.ordertimeout.outbox;

import io.ordertimeout.metrics.Metrics;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
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
    List<OutboxRow> pending = new ArrayList<>(rows);
    List<Long> accepted = new ArrayList<>();
    int failedRounds = 0;
    while (!pending.isEmpty()) {
      List<OutboxRow> heads = headsPerOrder(pending);
      Set<Long> ok = putAll(heads);
      pending.removeIf(r -> ok.contains(r.seq()));
      heads.stream().filter(r -> ok.contains(r.seq())).forEach(r -> accepted.add(r.seq()));
      if (ok.size() < heads.size()) {
        if (++failedRounds >= FAILED_ROUNDS) {
          break;
        }
        backoff(failedRounds);
      }
    }
    accepted.sort(Long::compare);
    return accepted;
  }

  /** The first pending row of each order, ascending seq. */
  private static List<OutboxRow> headsPerOrder(List<OutboxRow> pending) {
    Map<String, OutboxRow> heads = new LinkedHashMap<>();
    pending.forEach(r -> heads.putIfAbsent(r.orderId(), r));
    return new ArrayList<>(heads.values());
  }

  /** Sends {@code heads} in calls of at most 10 entries and 240 KB; answers the accepted seqs. */
  private Set<Long> putAll(List<OutboxRow> heads) {
    Set<Long> ok = new HashSet<>();
    List<OutboxRow> call = new ArrayList<>();
    List<PutEventsRequestEntry> entries = new ArrayList<>();
    int bytes = 0;
    for (OutboxRow row : heads) {
      PutEventsRequestEntry entry = entry(row);
      int size = size(entry);
      if (!call.isEmpty() && (call.size() == MAX_ENTRIES || bytes + size > MAX_CALL_BYTES)) {
        ok.addAll(put(call, entries));
        call.clear();
        entries.clear();
        bytes = 0;
      }
      call.add(row);
      entries.add(entry);
      bytes += size;
    }
    if (!call.isEmpty()) {
      ok.addAll(put(call, entries));
    }
    return ok;
  }

  /** One PutEvents; result entries come back in request order, each with an id or an error. */
  private List<Long> put(List<OutboxRow> rows, List<PutEventsRequestEntry> entries) {
    PutEventsResponse response;
    try {
      response = client.putEvents(PutEventsRequest.builder().entries(entries).build());
    } catch (SdkException e) {
      metrics.count("outbox_bridge_call_failures", 1);
      log.warn(
          "PutEvents of {} events to bus {} failed (first seq {}, order {}): {}",
          rows.size(),
          busName,
          rows.get(0).seq(),
          rows.get(0).orderId(),
          e.toString());
      return List.of();
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
    return ok;
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

  /** 100, 200 ms: spreads a retry of throttled entries past the bus's per-second quota refill. */
  private static void backoff(int failedRounds) {
    try {
      Thread.sleep(100L * Math.max(1, failedRounds));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while retrying PutEvents", e);
    }
  }
}
