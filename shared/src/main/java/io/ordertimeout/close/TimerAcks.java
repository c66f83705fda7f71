package io.ordertimeout.close;

import java.util.Collection;

/**
 * Where a closer acknowledges the payment timeouts of orders that are final after its commit
 * (closed, found paid or closed already, or unknown): the timers are removed from the index, at
 * once (a ZREM per shard, {@link OrderCloser}'s default) or with the sweep's next claim of their
 * shard (sweep.PendingAcks). Either way after the commit: a timer acknowledged late only comes back
 * after its claim lease, to a closer that finds its order final.
 */
@FunctionalInterface
public interface TimerAcks {
  void acknowledge(String tenantId, Collection<String> orderIds);
}
