package io.ordertimeout.outbox;

import io.ordertimeout.metrics.Metrics;
import java.util.List;

/**
 * Deletes outbox rows older than the retention age that every destination has, in bounded batches:
 * at most {@link #BATCHES_PER_RUN} DELETEs of {@code retentionBatch} rows per run, so a run holds
 * row locks for milliseconds at a time and a backlog is worked off over a few runs. Undelivered
 * rows are never deleted, however old.
 */
public final class OutboxRetention {
  /** 20 x 1,000 rows a minute is 28.8 M a day, far above the placement rate. */
  static final int BATCHES_PER_RUN = 20;

  private final OutboxStore store;
  private final List<Destination> destinations;
  private final RelaySettings settings;
  private final Metrics metrics;

  public OutboxRetention(
      OutboxStore store, List<Destination> destinations, RelaySettings settings, Metrics metrics) {
    this.store = store;
    this.destinations = List.copyOf(destinations);
    this.settings = settings;
    this.metrics = metrics;
  }

  /** One run: deletes until a batch comes back short or the run's batches are used up. */
  public int deleteOld() {
    int deleted = 0;
    for (int i = 0; i < BATCHES_PER_RUN; i++) {
      int n = store.deleteDelivered(settings.retention(), destinations, settings.retentionBatch());
      deleted += n;
      if (n < settings.retentionBatch()) {
        break;
      }
    }
    metrics.count("outbox_rows_deleted", deleted);
    return deleted;
  }
}
