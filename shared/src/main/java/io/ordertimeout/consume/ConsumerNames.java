package io.ordertimeout.consume;

import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.stream.EventStream;
import io.ordertimeout.util.Jitter;
import java.util.Optional;

/**
 * A small pool of consumer names ({@code c0..c<slots-1>}), leased with {@code SET NX PX}, so the
 * group's consumer list stays bounded however many Lambda invocations ever ran: each invocation
 * leases a free name, renews it while it loops and releases it at the end. A name whose holder died
 * is free again after the lease time, and its next holder first re-reads the name's own pending
 * entries.
 *
 * <p>Chosen over deleting idle consumers (XINFO CONSUMERS + XGROUP DELCONSUMER) because deletion
 * races with a slow consumer still holding entries, and deleting a consumer drops its pending
 * entries from the group; a reused name keeps them.
 */
public final class ConsumerNames {
  private final ShardLeases leases;
  private final EventStream stream;
  private final int slots;
  private final long ttlMillis;

  public ConsumerNames(ShardLeases leases, EventStream stream, int slots, long ttlMillis) {
    this.leases = leases;
    this.stream = stream;
    this.slots = slots;
    this.ttlMillis = ttlMillis;
  }

  /** A consumer name leased for {@code token}; empty when all slots are taken. */
  public Optional<String> lease(String token) {
    // A random start spreads concurrent invocations over the slots instead of all trying slot 0
    // (Jitter: re-seeded after a SnapStart restore, so restored copies do not all pick one slot).
    int start = Jitter.nextInt(slots);
    for (int i = 0; i < slots; i++) {
      int slot = (start + i) % slots;
      if (leases.acquire(stream.consumerSlotKey(slot), token, ttlMillis)) {
        return Optional.of(name(slot));
      }
    }
    return Optional.empty();
  }

  /** Renews the lease; false when it was lost (expired and taken by another invocation). */
  public boolean renew(String name, String token) {
    return leases.acquire(stream.consumerSlotKey(slot(name)), token, ttlMillis);
  }

  public void release(String name, String token) {
    leases.release(stream.consumerSlotKey(slot(name)), token);
  }

  private static String name(int slot) {
    return "c" + slot;
  }

  private static int slot(String name) {
    return Integer.parseInt(name.substring(1));
  }
}
