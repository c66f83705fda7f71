package io.ordertimeout.outbox;

import io.ordertimeout.loop.TimeBudget;
import io.ordertimeout.metrics.MetricNames;
import io.ordertimeout.metrics.Metrics;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves outbox rows to each destination in seq order, at least once, and marks them delivered only
 * after the destination accepted them; a relay that dies between the two delivers them again.
 *
 * <p>Why two relays at once neither lose nor reorder an order's events: a pass reads the lowest
 * undelivered seqs, and a row is marked only after it was delivered. So when a relay delivers row n
 * of an order, every earlier row of that order was either marked (delivered by someone before) or
 * is in the same read ahead of it, delivered first (Publisher's contract). The first delivery of
 * each event is therefore in commit order per order; a stalled relay's late duplicates come after,
 * and subscribers drop them by event id. The lease (one relay per destination, renewed every pass)
 * only saves that duplicate work. One relay instance runs on one thread; {@link #perDestination()}
 * splits it into one relay per destination, so each can run on a thread of its own.
 */
public final class OutboxRelay {
  private static final Logger log = LoggerFactory.getLogger(OutboxRelay.class);

  /**
   * Batches per destination and pass: a backlog drains 5 x 500 rows before the other destination.
   */
  static final int BATCHES_PER_PASS = 5;

  /** Stale cancels re-delivered per pass: few exist (UNPAID orders with a cancel past a minute). */
  static final int CANCELS_PER_PASS = 100;

  private final OutboxStore store;
  private final List<Publisher> publishers;
  private final RelaySettings settings;
  private final Metrics metrics;
  private final String holder;

  /** A pass with no time limit: tests and a relay driven by hand. */
  private static final TimeBudget UNBOUNDED = new TimeBudget(() -> Long.MAX_VALUE, Duration.ZERO);

  /**
   * When (System.nanoTime) each held lease is renewed next: half-way through it, so an idle relay
   * polling every 200 ms writes the lease row every 15 s instead of 5 times a second.
   */
  private final Map<Destination, Long> renewAt = new EnumMap<>(Destination.class);

  public OutboxRelay(
      OutboxStore store, List<Publisher> publishers, RelaySettings settings, Metrics metrics) {
    this(store, publishers, settings, metrics, "relay-" + UUID.randomUUID());
  }

  private OutboxRelay(
      OutboxStore store,
      List<Publisher> publishers,
      RelaySettings settings,
      Metrics metrics,
      String holder) {
    this.store = store;
    this.publishers = List.copyOf(publishers);
    this.settings = settings;
    this.metrics = metrics;
    this.holder = holder;
  }

  /**
   * One relay per destination, under this relay's holder name (each destination has its own lease
   * row): a loop of each, on a thread of its own, and one destination's trouble never waits for the
   * other's.
   */
  public List<OutboxRelay> perDestination() {
    return publishers.stream()
        .map(p -> new OutboxRelay(store, List.of(p), settings, metrics, holder))
        .toList();
  }

  /** One pass over every destination; returns the rows delivered (re-deliveries included). */
  public int relayOnce() {
    return relayOnce(UNBOUNDED);
  }

  /**
   * One pass over every destination within {@code budget}: a batch is started only while the budget
   * has time left, and every call to a destination ends within it.
   */
  public int relayOnce(TimeBudget budget) {
    int moved = 0;
    for (Publisher p : publishers) {
      moved += relayTo(p, budget);
    }
    return moved;
  }

  /** The destinations this relay delivers to (retention waits for all of them). */
  public List<Destination> destinations() {
    return publishers.stream().map(Publisher::destination).toList();
  }

  /** Gives the leases back, so the next invocation's relay need not wait for them to run out. */
  public void release() {
    for (Publisher p : publishers) {
      renewAt.remove(p.destination());
      try {
        store.releaseLease(p.destination(), holder);
      } catch (RuntimeException e) {
        log.warn("could not release the {} lease of {}: {}", p.destination(), holder, e.toString());
      }
    }
  }

  /** Records each destination's lag (age of its oldest undelivered row) and backlog. */
  public void recordLag() {
    for (Publisher p : publishers) {
      Destination d = p.destination();
      metrics.recordMillis(MetricNames.OUTBOX_LAG_MS, store.oldestPendingAgeMillis(d));
      metrics.gauge("outbox_pending_" + d.leaseName(), store.pendingCount(d));
    }
  }

  private int relayTo(Publisher p, TimeBudget budget) {
    Destination d = p.destination();
    try {
      if (budget.leftMillis() <= 0 || !holdsLease(d)) {
        return 0;
      }
      int moved = 0;
      for (int i = 0; i < BATCHES_PER_PASS && budget.leftMillis() > 0; i++) {
        List<OutboxRow> rows = store.pending(d, settings.batch());
        if (rows.isEmpty()) {
          break;
        }
        List<Long> accepted = p.publish(rows, budget::leftMillis);
        store.markDelivered(d, accepted);
        moved += accepted.size();
        metrics.count("outbox_relayed", accepted.size());
        if (accepted.size() < rows.size() || rows.size() < settings.batch()) {
          break;
        }
      }
      return d == Destination.STREAM && budget.leftMillis() > 0
          ? moved + redeliverCancels(p, budget)
          : moved;
    } catch (RuntimeException e) {
      // Nothing was marked that was not delivered: the next pass starts from the same rows.
      metrics.count("outbox_relay_failures", 1);
      log.warn("relay {} to {} failed; the next pass retries: {}", holder, d, e.toString());
      return 0;
    }
  }

  private boolean holdsLease(Destination d) {
    long now = System.nanoTime();
    Long due = renewAt.get(d);
    if (due != null && now - due < 0) {
      return true;
    }
    if (!store.claimLease(d, holder, settings.lease())) {
      renewAt.remove(d);
      return false;
    }
    renewAt.put(d, now + settings.lease().toNanos() / 2);
    return true;
  }

  /**
   * Puts stale cancel requests on the stream again (their orders are still UNPAID: Redis lost the
   * entry, or it was dead-lettered); marking them again restarts their redelivery period.
   */
  private int redeliverCancels(Publisher stream, TimeBudget budget) {
    List<OutboxRow> stale = store.staleCancels(settings.cancelRedeliverAfter(), CANCELS_PER_PASS);
    if (stale.isEmpty()) {
      return 0;
    }
    List<Long> accepted = stream.publish(stale, budget::leftMillis);
    store.markDelivered(Destination.STREAM, accepted);
    metrics.count("outbox_cancels_redelivered", accepted.size());
    log.info(
        "re-delivered {} cancel requests of UNPAID orders (first {})",
        accepted.size(),
        stale.get(0).orderId());
    return accepted.size();
  }
}
