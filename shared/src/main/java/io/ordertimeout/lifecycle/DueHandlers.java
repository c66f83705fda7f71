package io.ordertimeout.lifecycle;

import io.ordertimeout.domain.DeadlineKind;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * What the sweep does with the claimed timers of every kind but the payment timeout (which has its
 * own closer, hand-off and cost model): the generic transition the kind triggers, or the coupon
 * expiry. The sweep sees only this map: a new deadline kind with its transition reaches it without
 * a change to the sweep, the claim script or the stream consumer.
 */
public final class DueHandlers {
  /** Applies a batch of one tenant's claimed subjects of one kind; answers how many moved on. */
  @FunctionalInterface
  public interface Handler {
    int apply(String tenantId, List<String> subjectIds);
  }

  private DueHandlers() {}

  public static Map<DeadlineKind, Handler> of(Transitions transitions, Coupons coupons) {
    Map<DeadlineKind, Handler> handlers = new EnumMap<>(DeadlineKind.class);
    for (DeadlineKind kind : DeadlineKind.values()) {
      if (kind == DeadlineKind.PAYMENT_TIMEOUT) {
        continue;
      }
      if (kind == DeadlineKind.COUPON_EXPIRY) {
        handlers.put(kind, (tenant, ids) -> coupons.expireDue(tenant, ids).expired().size());
        continue;
      }
      Transition t =
          Transition.triggeredBy(kind)
              .orElseThrow(
                  () -> new IllegalStateException("no transition is triggered by " + kind));
      handlers.put(kind, (tenant, ids) -> transitions.applyDue(t, tenant, ids).applied().size());
    }
    return handlers;
  }
}
