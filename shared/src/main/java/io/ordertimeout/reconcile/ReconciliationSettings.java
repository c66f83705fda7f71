package io.ordertimeout.reconcile;

import java.util.Map;

/**
 * When the daily reconciliation runs, from {@code OTC_RECONCILE_*} environment variables.
 *
 * @param hour the hour of the day (Asia/Shanghai, 0..23) from which yesterday's bill is fetched.
 *     10: WeChat Pay publishes a day's trade bill from 9:00 the next morning (Beijing); an hour
 *     later it is there for every merchant.
 * @param lookbackDays how many days back (1..31, yesterday being 1) a day without a report is
 *     reconciled: a day whose bill could not be had (WeChat down, STATEMENT_CREATING) is tried
 *     again on every compensation run until it has one. 3 covers a weekend-long outage; WeChat
 *     keeps bills for three months.
 */
public record ReconciliationSettings(int hour, int lookbackDays) {

  public ReconciliationSettings {
    if (hour < 0 || hour > 23) {
      throw new IllegalArgumentException("OTC_RECONCILE_HOUR " + hour + " not in 0..23");
    }
    if (lookbackDays < 1 || lookbackDays > 31) {
      throw new IllegalArgumentException(
          "OTC_RECONCILE_LOOKBACK_DAYS " + lookbackDays + " not in 1..31");
    }
  }

  public static ReconciliationSettings defaults() {
    return new ReconciliationSettings(10, 3);
  }

  /** Defaults, each overridden by its OTC_RECONCILE_* variable when set. */
  public static ReconciliationSettings fromEnvironment(Map<String, String> env) {
    ReconciliationSettings d = defaults();
    return new ReconciliationSettings(
        integer(env, "OTC_RECONCILE_HOUR", d.hour()),
        integer(env, "OTC_RECONCILE_LOOKBACK_DAYS", d.lookbackDays()));
  }

  private static int integer(Map<String, String> env, String name, int fallback) {
    String raw = env.get(name);
    if (raw == null) {
      return fallback;
    }
    try {
      return Integer.parseInt(raw.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " is not a number: '" + raw + "'", e);
    }
  }
}
