package io.ordertimeout.embedded.wechat;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * What becomes of the notifications of coming payments: how many copies each payment is notified
 * with, how long before the first attempt, and how many of the next notifications are lost (never
 * reach the webhook, retries included, as when WeChat gives up or a proxy swallows them). Settings
 * for every trade, overridden per trade; one lock, like {@link TradeBook}.
 */
final class NotificationControls {

  /** WeChat duplicates a notification a few times at most; 100 copies is already a flood. */
  static final int MAX_COPIES = 100;

  /** Losing more than 1,000 notifications is a switched-off webhook: set none instead. */
  static final int MAX_LOSE = 1_000;

  /** WeChat's own retries end after 24h4m; a first attempt later than a day is never seen. */
  static final Duration MAX_DELAY = Duration.ofHours(24);

  /**
   * The controls in force, as shown.
   *
   * @param copies notifications per payment
   * @param delay before the first attempt of each
   * @param toLose how many of the next notifications are still to be lost
   */
  record Settings(int copies, Duration delay, int toLose) {}

  /** The notifications of one payment: {@code copies}, of which the first {@code lost} vanish. */
  record Plan(int copies, Duration delay, int lost) {
    int delivered() {
      return copies - lost;
    }
  }

  /** One trade's notifications so far: handed to the sender, and lost by a control. */
  record Counts(int sent, int lost) {}

  /** What one trade has seen: its own overrides (null: the global setting) and its counts. */
  private static final class TradeControls {
    Integer copies;
    Duration delay;
    int toLose;
    int sent;
    int lost;
  }

  private final Map<String, TradeControls> trades = new HashMap<>();
  private int copies = 1;
  private Duration delay = Duration.ZERO;
  private int toLose;

  /** Validated, so that a refused control changes nothing. */
  static void checkCopies(int copies) {
    if (copies < 1 || copies > MAX_COPIES) {
      throw new IllegalArgumentException("copies must be 1.." + MAX_COPIES + ", was " + copies);
    }
  }

  static void checkLose(int count) {
    if (count < 0 || count > MAX_LOSE) {
      throw new IllegalArgumentException("lose must be 0.." + MAX_LOSE + ", was " + count);
    }
  }

  static void checkDelay(Duration delay) {
    if (delay.isNegative() || delay.compareTo(MAX_DELAY) > 0) {
      throw new IllegalArgumentException("delay must be 0..24h, was " + delay);
    }
  }

  synchronized void copies(int n) {
    checkCopies(n);
    this.copies = n;
  }

  synchronized void delay(Duration d) {
    checkDelay(d);
    this.delay = d;
  }

  /** The next {@code count} notifications of any trade are lost (0: none); replaces, not adds. */
  synchronized void lose(int count) {
    checkLose(count);
    this.toLose = count;
  }

  synchronized void copies(String outTradeNo, int n) {
    checkCopies(n);
    trade(outTradeNo).copies = n;
  }

  synchronized void delay(String outTradeNo, Duration d) {
    checkDelay(d);
    trade(outTradeNo).delay = d;
  }

  synchronized void lose(String outTradeNo, int count) {
    checkLose(count);
    trade(outTradeNo).toLose = count;
  }

  synchronized Settings global() {
    return new Settings(copies, delay, toLose);
  }

  /** The settings a payment of this trade would get now; toLose counts the trade's own only. */
  synchronized Settings of(String outTradeNo) {
    TradeControls t = trades.get(outTradeNo);
    if (t == null) {
      return new Settings(copies, delay, 0);
    }
    return new Settings(
        t.copies == null ? copies : t.copies, t.delay == null ? delay : t.delay, t.toLose);
  }

  /** Drops the trade's overrides and counts (see WeChatPaySimulator#forget). */
  synchronized void forget(String outTradeNo) {
    trades.remove(outTradeNo);
  }

  /** Notifications of this trade handed to the sender, and lost by a control. */
  synchronized Counts counts(String outTradeNo) {
    TradeControls t = trades.get(outTradeNo);
    return t == null ? new Counts(0, 0) : new Counts(t.sent, t.lost);
  }

  /**
   * Plans the notifications of one payment (or of a resend, with {@code copiesOverride} > 0) and
   * consumes the lose counters: the trade's own first, then the global ones.
   */
  synchronized Plan plan(String outTradeNo, int copiesOverride) {
    TradeControls t = trade(outTradeNo);
    int n = copiesOverride > 0 ? copiesOverride : t.copies == null ? copies : t.copies;
    int lost = 0;
    for (int i = 0; i < n; i++) {
      if (t.toLose > 0) {
        t.toLose--;
        lost++;
      } else if (toLose > 0) {
        toLose--;
        lost++;
      }
    }
    t.sent += n - lost;
    t.lost += lost;
    return new Plan(n, t.delay == null ? delay : t.delay, lost);
  }

  private TradeControls trade(String outTradeNo) {
    return trades.computeIfAbsent(outTradeNo, k -> new TradeControls());
  }
}
