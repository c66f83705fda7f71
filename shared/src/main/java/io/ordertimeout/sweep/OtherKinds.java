package io.ordertimeout.sweep;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.lifecycle.DueHandlers;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.redis.TimerIndex.TimerSet;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sweep's deadline kinds beyond the payment timeout: claimed in the same script call per shard,
 * each with its own budget, and applied inline by the kind's handler after the payment closes (the
 * latency that matters most). A failed batch keeps its claim lease and comes back to a sweep when
 * it runs out; the handlers' conditional UPDATEs make the second try harmless.
 */
final class OtherKinds {
  // the sweep's logger: operators filter on its name
  private static final Logger log = LoggerFactory.getLogger(TimeoutSweeper.class);

  private final Map<DeadlineKind, DueHandlers.Handler> handlers;
  private final int batch;
  private final Metrics metrics;

  OtherKinds(Map<DeadlineKind, DueHandlers.Handler> handlers, int batch, Metrics metrics) {
    this.handlers = Map.copyOf(handlers);
    this.batch = batch;
    this.metrics = metrics;
  }

  /**
   * The claim limits of one shard: {@code paymentLimit} for payment timeouts, the batch for each
   * other.
   */
  Map<DeadlineKind, Integer> limits(int paymentLimit) {
    Map<DeadlineKind, Integer> limits = new EnumMap<>(DeadlineKind.class);
    limits.put(DeadlineKind.PAYMENT_TIMEOUT, paymentLimit);
    handlers.keySet().forEach(kind -> limits.put(kind, batch));
    return limits;
  }

  /** Applies each kind's claimed batch; answers how many were claimed. */
  int apply(Map<TimerSet, List<String>> claimed) {
    int count = 0;
    for (Map.Entry<TimerSet, List<String>> set : claimed.entrySet()) {
      DeadlineKind kind = set.getKey().kind();
      List<String> ids = set.getValue();
      if (ids.isEmpty()) {
        continue;
      }
      count += ids.size();
      try {
        handlers.get(kind).apply(set.getKey().tenantId(), ids);
      } catch (RuntimeException e) {
        metrics.count("deadline_batch_failures", 1);
        log.warn(
            "applying {} claimed {} deadlines of tenant {} (first {}) failed; they return after"
                + " the claim lease: {}",
            ids.size(),
            kind.label(),
            set.getKey().tenantId(),
            ids.get(0),
            e.toString());
      }
    }
    return count;
  }
}
