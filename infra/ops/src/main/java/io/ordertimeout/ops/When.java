package io.ordertimeout.ops;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** Times and distances as a person reads them: UTC to the second, two units of a span. */
final class When {
  private static final DateTimeFormatter AT =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'").withZone(ZoneOffset.UTC);

  private When() {}

  /** {@code 2026-12-04 01:57:13Z}; null prints as "-". */
  static String at(Instant t) {
    return t == null ? "-" : AT.format(t);
  }

  /**
   * A span without sign, truncated: {@code 450ms}, {@code 9.9s}, {@code 53s}, {@code 9m 53s},
   * {@code 2h 5m}, {@code 9d 23h}.
   */
  static String span(Duration d) {
    Duration a = d.abs();
    long ms = a.toMillis();
    if (ms < 1_000) {
      return ms + "ms";
    }
    if (ms < 10_000) {
      return (ms / 1_000) + "." + (ms % 1_000) / 100 + "s";
    }
    long s = a.getSeconds();
    if (s < 60) {
      return s + "s";
    }
    if (s < 3_600) {
      return s / 60 + "m " + s % 60 + "s";
    }
    if (s < 86_400) {
      return s / 3_600 + "h " + (s % 3_600) / 60 + "m";
    }
    return s / 86_400 + "d " + (s % 86_400) / 3_600 + "h";
  }

  /** {@code 9m 53s before the payment deadline}, {@code 3s after ...}, {@code at ...}. */
  static String toDeadline(Instant t, Instant deadline, String name) {
    Duration d = Duration.between(t, deadline);
    if (d.isZero()) {
      return "at the " + name + " deadline";
    }
    return span(d) + (d.isNegative() ? " after" : " before") + " the " + name + " deadline";
  }

  /** {@code in 9m 12s}, {@code 9m 12s ago} or {@code now}, from {@code now}. */
  static String fromNow(Instant t, Instant now) {
    Duration d = Duration.between(now, t);
    if (d.isZero()) {
      return "now";
    }
    return d.isNegative() ? span(d) + " ago" : "in " + span(d);
  }
}
