package io.ordertimeout.sweep;

import io.ordertimeout.close.TimerAcks;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.redis.TimerIndex.TimerSet;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.IntPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The payment timeouts a sweep's closers finished, per shard, waiting to ride on the sweep's next
 * claim of their shard ({@code claimDue-4.lua} removes them before it claims). In steady traffic
 * every pass claims every shard, and a ZREM per shard after each closing commit was as many round
 * trips as the claims themselves: half of a pass's Redis calls, each a write, a read and a wake-up
 * in the client. Shards a pass does not claim get theirs removed at the end of the pass, and the
 * run removes what is left when it ends, so an acknowledgement waits at most a pass.
 *
 * <p>Late is safe: a finished order's timer keeps its claim lease meanwhile, hidden from claimers;
 * if the run dies before removing it, it comes back after the lease to a closer that finds the
 * order final and removes it then. Closer threads add, the sweep thread takes.
 */
final class PendingAcks implements TimerAcks {
  private static final Logger log = LoggerFactory.getLogger(TimeoutSweeper.class);

  private record Ack(String tenantId, String orderId) {}

  private final TimerIndex timers;
  private final Map<Integer, Queue<Ack>> byShard = new ConcurrentHashMap<>();

  PendingAcks(TimerIndex timers) {
    this.timers = timers;
  }

  @Override
  public void acknowledge(String tenantId, Collection<String> orderIds) {
    for (String id : orderIds) {
      byShard
          .computeIfAbsent(timers.shardOf(id), s -> new ConcurrentLinkedQueue<>())
          .add(new Ack(tenantId, id));
    }
  }

  /** Takes the shard's pending acknowledgements: order ids per (tenant, payment timeout) set. */
  Map<TimerSet, List<String>> take(int shard) {
    Queue<Ack> queue = byShard.get(shard);
    Map<TimerSet, List<String>> taken = new LinkedHashMap<>();
    if (queue == null) {
      return taken;
    }
    for (Ack ack = queue.poll(); ack != null; ack = queue.poll()) {
      taken
          .computeIfAbsent(
              new TimerSet(ack.tenantId(), DeadlineKind.PAYMENT_TIMEOUT), s -> new ArrayList<>())
          .add(ack.orderId());
    }
    return taken;
  }

  /** Gives back what {@link #take} took when the claim that carried it failed. */
  void putBack(Map<TimerSet, List<String>> taken) {
    taken.forEach((set, ids) -> acknowledge(set.tenantId(), ids));
  }

  /**
   * Removes, with a ZREM per set, the pending acknowledgements of every shard {@code which}
   * accepts; one that fails stays pending (the next flush or claim tries again).
   */
  void flush(IntPredicate which) {
    for (Integer shard : List.copyOf(byShard.keySet())) {
      if (!which.test(shard)) {
        continue;
      }
      Map<TimerSet, List<String>> taken = take(shard);
      try {
        taken.forEach((set, ids) -> timers.remove(set.tenantId(), set.kind(), ids));
      } catch (RuntimeException e) {
        putBack(taken);
        log.warn(
            "removing the timers of finished orders in shard {} failed; tried again later (they"
                + " keep their claim lease meanwhile): {}",
            shard,
            e.toString());
      }
    }
  }

  /** How many acknowledgements wait (tests, and the run's end). */
  int size() {
    return byShard.values().stream().mapToInt(Queue::size).sum();
  }
}
