package io.ordertimeout.embedded.wechat;

import java.security.KeyPair;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * The RSA-2048 pairs simulators sign and are signed with. Generating one costs 50 to 500 ms of CPU
 * (finding two primes); a test JVM starts a simulator in nearly every test, and key generation was
 * a third of the CPU the {@code shared} module's tests used. A stopped simulator gives its pairs
 * back and the next one started in this JVM takes them; simulators alive at the same moment never
 * share a pair, so a signature of one merchant still fails against another's key. The key ids and
 * serial numbers a simulator announces stay fresh for each one.
 */
final class SimulatorKeys {

  private static final ConcurrentLinkedDeque<KeyPair> FREE = new ConcurrentLinkedDeque<>();

  private SimulatorKeys() {}

  /** A pair no running simulator holds: one given back, or a new one. */
  static KeyPair take() {
    KeyPair free = FREE.pollFirst();
    return free != null ? free : WeChatCrypto.newRsaKeyPair();
  }

  /** Gives back a pair its simulator no longer uses; call once per {@link #take()}. */
  static void giveBack(KeyPair pair) {
    FREE.addFirst(pair);
  }
}
