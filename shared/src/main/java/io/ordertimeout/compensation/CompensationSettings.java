package io.ordertimeout.compensation;

import java.time.Duration;
import java.util.Map;

/**
 * Tunables of one compensation pass, from {@code OTC_COMPENSATION_*} environment variables; each
 * default below carries its reason.
 *
 * @param grace an UNPAID order this long past its deadline counts as missed by Redis. 60 s: the
 *     sweep polls every ~100 ms and a claim lease is 30 s, so an order still open a minute after
 *     its deadline was missed, not merely in flight.
 * @param pageSize rows per keyset page (and per Redis ZMSCORE / ZSCAN / XAUTOCLAIM call). 1,000
 *     keeps each query a few ms and each IN list well under max_allowed_packet.
 * @param pageBudget pages per category per run. 500 x 1,000 = 500,000 rows: far above the orders
 *     open at once in practice, while bounding one run if the database holds a backlog.
 * @param recentWindow how far back the snapshot check looks (created_at). 30 min covers every order
 *     created since a few runs ago (the schedule is 5 min), so each order is checked several times
 *     while it can still change, and old orders are not re-read forever.
 * @param closedWindow how far back prepaid CLOSED orders are re-queried at WeChat. 15 min = three
 *     runs: a payment that raced the close shows up at WeChat within seconds.
 * @param notifyGrace a prepaid UNPAID order is queried once its prepay is this old. 60 s: WeChat's
 *     first notification retries come after 15 s and 30 s, so a minute means it was lost.
 * @param wechatBudget WeChat queries per run: ~50 ms each, 2,000 = ~100 s of a 240 s timeout (the
 *     pass also stops before its remaining time runs out, whichever comes first).
 * @param stuckAfter a stream entry pending this long is stuck. 10 min: consumers reclaim idle
 *     entries after 30 s and dead-letter them after 5 deliveries (~2.5 min), so ten minutes means
 *     no consumer is processing it.
 * @param parkFor the timer of an UNPAID order with an open dead letter is moved this far ahead (5
 *     min = one compensation period; see Compensator's class comment).
 */
public record CompensationSettings(
    Duration grace,
    int pageSize,
    int pageBudget,
    Duration recentWindow,
    Duration closedWindow,
    Duration notifyGrace,
    int wechatBudget,
    Duration stuckAfter,
    Duration parkFor) {

  public CompensationSettings {
    if (pageSize < 1 || pageSize > 10_000) {
      throw new IllegalArgumentException("compensation page size " + pageSize + " not in 1..10000");
    }
    if (pageBudget < 1 || wechatBudget < 0) {
      throw new IllegalArgumentException(
          "compensation budgets must be positive: pages "
              + pageBudget
              + ", wechat "
              + wechatBudget);
    }
    for (Duration d : new Duration[] {grace, recentWindow, closedWindow, notifyGrace, stuckAfter}) {
      if (d.isNegative()) {
        throw new IllegalArgumentException("compensation durations must not be negative: " + d);
      }
    }
  }

  public static CompensationSettings defaults() {
    return new CompensationSettings(
        Duration.ofSeconds(60),
        1_000,
        500,
        Duration.ofMinutes(30),
        Duration.ofMinutes(15),
        Duration.ofSeconds(60),
        2_000,
        Duration.ofMinutes(10),
        Duration.ofMinutes(5));
  }

  /** Defaults, each overridden by its OTC_COMPENSATION_* variable when set. */
  public static CompensationSettings fromEnvironment(Map<String, String> env) {
    CompensationSettings d = defaults();
    return new CompensationSettings(
        millis(env, "OTC_COMPENSATION_GRACE_MS", d.grace()),
        integer(env, "OTC_COMPENSATION_PAGE_SIZE", d.pageSize()),
        integer(env, "OTC_COMPENSATION_PAGE_BUDGET", d.pageBudget()),
        millis(env, "OTC_COMPENSATION_RECENT_WINDOW_MS", d.recentWindow()),
        millis(env, "OTC_COMPENSATION_CLOSED_WINDOW_MS", d.closedWindow()),
        millis(env, "OTC_COMPENSATION_NOTIFY_GRACE_MS", d.notifyGrace()),
        integer(env, "OTC_COMPENSATION_WECHAT_BUDGET", d.wechatBudget()),
        millis(env, "OTC_COMPENSATION_STUCK_AFTER_MS", d.stuckAfter()),
        millis(env, "OTC_COMPENSATION_PARK_FOR_MS", d.parkFor()));
  }

  public CompensationSettings withGrace(Duration value) {
    return new CompensationSettings(
        value,
        pageSize,
        pageBudget,
        recentWindow,
        closedWindow,
        notifyGrace,
        wechatBudget,
        stuckAfter,
        parkFor);
  }

  public CompensationSettings withNotifyGrace(Duration value) {
    return new CompensationSettings(
        grace,
        pageSize,
        pageBudget,
        recentWindow,
        closedWindow,
        value,
        wechatBudget,
        stuckAfter,
        parkFor);
  }

  public CompensationSettings withStuckAfter(Duration value) {
    return new CompensationSettings(
        grace,
        pageSize,
        pageBudget,
        recentWindow,
        closedWindow,
        notifyGrace,
        wechatBudget,
        value,
        parkFor);
  }

  private static Duration millis(Map<String, String> env, String name, Duration fallback) {
    String raw = env.get(name);
    return raw == null ? fallback : Duration.ofMillis(parse(name, raw));
  }

  private static int integer(Map<String, String> env, String name, int fallback) {
    String raw = env.get(name);
    return raw == null ? fallback : Math.toIntExact(parse(name, raw));
  }

  private static long parse(String name, String raw) {
    try {
      return Long.parseLong(raw.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " is not a number: '" + raw + "'", e);
    }
  }
}
