package io.ordertimeout.util;

import java.security.SecureRandom;
import java.util.SplittableRandom;

/**
 * The one random source of the code's jitter (wait spreads, retry backoffs, the consumer name a run
 * tries first), re-seeded after a SnapStart restore.
 *
 * <p>Why not {@code ThreadLocalRandom} or {@code Math.random()}: their state is seeded once, at
 * class initialisation or a thread's first use, so it is in the snapshot, and every execution
 * environment restored from one snapshot draws the same numbers: 100 environments scaled out at
 * once would retry in the same millisecond and try the same consumer name first, the very herd the
 * jitter is for. {@link #reseed()} runs in {@code aws.SnapStartHooks#afterRestore}, from {@link
 * SecureRandom} (which the Lambda Java runtime keeps unique per restored environment) and the
 * restored clock.
 *
 * <p>A {@link SplittableRandom} behind one lock: the draws are a few per second at most, so the
 * lock costs nothing, and one state means one re-seed covers every thread, including those that
 * existed before the checkpoint.
 */
public final class Jitter {
  // One instance, initialised before the seed below: Lambda's SecureRandom draws fresh entropy
  // after
  // a SnapStart restore.
  private static final SecureRandom ENTROPY = new SecureRandom();

  private static SplittableRandom random = new SplittableRandom(freshSeed());

  private Jitter() {}

  /** A value in {@code [0, bound)}; {@code bound} must be positive. */
  public static synchronized long nextLong(long bound) {
    return random.nextLong(bound);
  }

  /** A value in {@code [0, bound)}; {@code bound} must be positive. */
  public static synchronized int nextInt(int bound) {
    return random.nextInt(bound);
  }

  /** Draws from a fresh seed from now on (after a SnapStart restore). */
  public static void reseed() {
    seed(freshSeed());
  }

  /** Draws from {@code seed} from now on: the state a snapshot would hold (tests). */
  public static synchronized void seed(long seed) {
    random = new SplittableRandom(seed);
  }

  private static long freshSeed() {
    return ENTROPY.nextLong() ^ System.nanoTime();
  }
}
