package io.ordertimeout.load;

import java.util.Locale;

/**
 * What one open-loop step sends: {@code rate} new users a second for {@code seconds}, each placing
 * one order (one item, timeout {@code timeoutSeconds}); one in {@code payEvery} then prepays and
 * pays it on the WeChat Pay simulator, one in {@code cancelEvery} cancels it, the rest let it
 * expire. Passed to {@link OrderMixSimulation} as system properties, since Gatling builds the
 * simulation itself.
 */
record LoadSettings(
    String api,
    String sim,
    String idPrefix,
    double rate,
    int seconds,
    int timeoutSeconds,
    int payEvery,
    int cancelEvery) {

  LoadSettings {
    if (!(rate > 0) || seconds <= 0 || timeoutSeconds <= 0) {
      throw new IllegalArgumentException(
          "rate, seconds and timeoutSeconds must be positive: "
              + rate
              + ", "
              + seconds
              + ", "
              + timeoutSeconds);
    }
    if (payEvery < 0 || cancelEvery < 0) {
      throw new IllegalArgumentException("payEvery and cancelEvery must be 0 (none) or more");
    }
    if (!idPrefix.matches("[A-Za-z0-9]{1,20}")) {
      throw new IllegalArgumentException("idPrefix must be 1-20 letters or digits: " + idPrefix);
    }
  }

  private static final String PREFIX = "otc.load.";

  /** Percent of users who pay (0 to 100). */
  double payPercent() {
    return payEvery == 0 ? 0 : 100.0 / payEvery;
  }

  /** Percent of users who cancel. */
  double cancelPercent() {
    return cancelEvery == 0 ? 0 : 100.0 / cancelEvery;
  }

  void toSystemProperties() {
    System.setProperty(PREFIX + "api", api);
    System.setProperty(PREFIX + "sim", sim);
    System.setProperty(PREFIX + "idPrefix", idPrefix);
    System.setProperty(PREFIX + "rate", String.format(Locale.ROOT, "%.3f", rate));
    System.setProperty(PREFIX + "seconds", Integer.toString(seconds));
    System.setProperty(PREFIX + "timeoutSeconds", Integer.toString(timeoutSeconds));
    System.setProperty(PREFIX + "payEvery", Integer.toString(payEvery));
    System.setProperty(PREFIX + "cancelEvery", Integer.toString(cancelEvery));
  }

  static LoadSettings fromSystemProperties() {
    return new LoadSettings(
        required("api"),
        required("sim"),
        required("idPrefix"),
        Double.parseDouble(required("rate")),
        Integer.parseInt(required("seconds")),
        Integer.parseInt(required("timeoutSeconds")),
        Integer.parseInt(required("payEvery")),
        Integer.parseInt(required("cancelEvery")));
  }

  private static String required(String name) {
    String value = System.getProperty(PREFIX + name);
    if (value == null || value.isBlank()) {
      throw new IllegalStateException("system property " + PREFIX + name + " is not set");
    }
    return value;
  }
}
