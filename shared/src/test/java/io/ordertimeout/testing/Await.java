package io.ordertimeout.testing;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The one way tests wait: poll a real outcome (a row, a key, a counter) until it holds, instead of
 * sleeping a fixed time. Polls every 20 ms (the tests' sweep poll, OTC_SWEEP_POLL_MS) and gives up
 * after {@link #DEFAULT_TIMEOUT}, failing with {@code what} in the message so a timeout names the
 * outcome that never came.
 */
public final class Await {
  /**
   * 30 s: the slowest outcome awaited on a loaded 2-core builder (a consumer's blocking read plus a
   * WeChat call timing out) takes a few seconds; 30 s only bounds a test that would otherwise hang.
   */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

  static final Duration POLL = Duration.ofMillis(20);

  private Await() {}

  /** A condition factory named {@code what}, polling every 20 ms for at most {@code timeout}. */
  public static ConditionFactory await(String what, Duration timeout) {
    return Awaitility.await(what)
        .pollDelay(Duration.ZERO)
        .pollInterval(POLL)
        .atMost(timeout)
        .pollInSameThread();
  }

  public static ConditionFactory await(String what) {
    return await(what, DEFAULT_TIMEOUT);
  }

  /** Waits until {@code condition} holds; fails naming {@code what} after {@code timeout}. */
  public static void until(String what, Duration timeout, BooleanSupplier condition) {
    await(what, timeout).until(condition::getAsBoolean);
  }

  public static void until(String what, BooleanSupplier condition) {
    until(what, DEFAULT_TIMEOUT, condition);
  }

  /**
   * Like {@code await.until(condition)}, but answers false instead of failing when the timeout
   * passes: for callers whose own assertions afterwards report what was left undone (e.g. the
   * orders still UNPAID), or that go on by design.
   */
  public static boolean reached(ConditionFactory await, Callable<Boolean> condition) {
    try {
      await.until(condition);
      return true;
    } catch (ConditionTimeoutException e) {
      return false;
    }
  }

  /** Waits until {@code value} satisfies {@code test} and returns the value that did. */
  public static <T> T until(String what, Callable<T> value, Predicate<? super T> test) {
    return await(what).until(value, test::test);
  }
}
