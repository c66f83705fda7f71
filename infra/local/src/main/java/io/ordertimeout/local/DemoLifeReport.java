package io.ordertimeout.local;

import io.ordertimeout.lifecycle.LifecycleSettings;
import io.ordertimeout.local.DemoLife.Call;
import io.ordertimeout.local.DemoLife.Plan;
import io.ordertimeout.local.DemoReport.Check;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.HdrHistogram.Histogram;

/**
 * The checks of the demo's second act ({@link DemoLife}): what each paid order lived against its
 * plan, by its row, its outbox events and the client's own calls. Each planned transition happened
 * exactly as planned (once, by the planned trigger), none before its deadline, the due times are
 * what the periods say, and the counts per transition equal the plan's; each deadline kind's lag
 * (p50 / p99 / max of applied minus due) is reported, with p99 bounded like the close lag.
 */
final class DemoLifeReport {

  /** The outbox event types of the life after payment, in the order a life writes them. */
  static final List<String> EVENTS =
      List.of(
          "shipped",
          "receipt_extended",
          "received",
          "after_sale_opened",
          "after_sale_resolved",
          "completed");

  /**
   * One order at the end: times are epoch ms computed by the database from the UTC DATETIME(3)
   * values (null: not set); {@code events}: outbox rows per type.
   */
  record Row(
      String status,
      String receivedBy,
      int afterSales,
      boolean extended,
      Long shippedMs,
      Long receiveDueMs,
      Long receivedMs,
      Long completeDueMs,
      Long completedMs,
      Map<String, Integer> events) {
    int events(String type) {
      return events.getOrDefault(type, 0);
    }
  }

  /** One coupon at the end. */
  record CouponRow(String status, Long validUntilMs, Long expiredMs) {}

  /** One planned order: its plan, the client's calls (by name) and its row (null: none). */
  record Life(DemoLife.Order order, Map<String, Call> calls, Row row) {
    Call call(String name) {
      return calls.get(name);
    }
  }

  private DemoLifeReport() {}

  /** The events a plan writes, per type. */
  static Map<String, Integer> plannedEvents(Plan plan) {
    Map<String, Integer> events = new LinkedHashMap<>();
    EVENTS.forEach(e -> events.put(e, 0));
    if (plan == Plan.STAY_PAID) {
      return events;
    }
    events.put("shipped", 1);
    events.put("received", 1);
    events.put("completed", 1);
    if (plan == Plan.EXTEND) {
      events.put("receipt_extended", 1);
    }
    if (plan == Plan.AFTER_SALE) {
      events.put("after_sale_opened", 1);
      events.put("after_sale_resolved", 1);
    }
    return events;
  }

  /** The route calls a plan makes. */
  static List<String> plannedCalls(Plan plan) {
    return switch (plan) {
      case CONFIRM -> List.of("ship", "confirm");
      case AUTO_RECEIVE -> List.of("ship");
      case EXTEND -> List.of("ship", "extend");
      case AFTER_SALE -> List.of("ship", "confirm", "open", "resolve");
      case STAY_PAID -> List.of();
    };
  }

  static String plannedReceiver(Plan plan) {
    return switch (plan) {
      case CONFIRM, AFTER_SALE -> "USER";
      case AUTO_RECEIVE, EXTEND -> "AUTO";
      case STAY_PAID -> null;
    };
  }

  /** Lines for the report: the transitions planned and seen, and each deadline kind's lag. */
  static List<String> lines(
      List<Life> lives,
      Map<String, CouponRow> coupons,
      List<String> sweptCoupons,
      LifecycleSettings periods) {
    List<String> lines = new ArrayList<>();
    lines.add(
        String.format(
            "life after payment: %d paid orders (receipt period %s, extension %s, after-sale"
                + " window %s)",
            lives.size(),
            periods.receiptPeriod(),
            periods.receiptExtension(),
            periods.afterSaleWindow()));
    lives.stream()
        .collect(Collectors.groupingBy(l -> l.order().plan(), TreeMap::new, Collectors.counting()))
        .forEach((plan, n) -> lines.add(String.format("  plan %-46s %6d", plan, n)));
    lines.add("transitions (outbox events, planned / happened):");
    for (String type : EVENTS) {
      long planned = lives.stream().mapToLong(l -> plannedEvents(l.order().plan()).get(type)).sum();
      long happened =
          lives.stream().filter(l -> l.row() != null).mapToLong(l -> l.row().events(type)).sum();
      lines.add(String.format("  %-50s %6d / %d", type, planned, happened));
    }
    for (String by : List.of("USER", "AUTO")) {
      long planned =
          lives.stream().filter(l -> by.equals(plannedReceiver(l.order().plan()))).count();
      long happened =
          lives.stream().filter(l -> l.row() != null && by.equals(l.row().receivedBy())).count();
      lines.add(String.format("  %-50s %6d / %d", "received by " + by, planned, happened));
    }
    lines.add("deadline lag (applied - due, from the columns):");
    lags(lives, coupons, sweptCoupons)
        .forEach((kind, lag) -> lines.add(String.format("  %-24s %s", kind, describe(lag))));
    return lines;
  }

  /** The checks of the act, each failing on one diverging order. */
  static List<Check> checks(
      List<Life> lives,
      Map<String, CouponRow> coupons,
      List<String> shortCoupons,
      List<String> longCoupons,
      String lockedCoupon,
      String lockedCouponOrderOutcome,
      LifecycleSettings periods,
      long lagBoundMillis) {
    List<Check> checks = new ArrayList<>();
    checks.add(
        expect(
            "calls",
            lives,
            l ->
                plannedCalls(l.order().plan()).stream()
                    .allMatch(c -> l.call(c) != null && l.call(c).changed()),
            "paid orders had every planned call (ship, confirm, extend, open, resolve) applied",
            l ->
                l.order().plan()
                    + " "
                    + plannedCalls(l.order().plan()).stream()
                        .map(c -> c + " " + (l.call(c) == null ? "not made" : l.call(c).answer()))
                        .collect(Collectors.joining(", "))));
    checks.add(
        expect(
            "lives",
            lives,
            l -> endedAsPlanned(l),
            "paid orders ended as planned (COMPLETED, received by USER or AUTO, extended,"
                + " after-sales; STAY_PAID still PAID)",
            l ->
                l.order().plan()
                    + " ended "
                    + (l.row() == null
                        ? "not in the database"
                        : l.row().status()
                            + " received_by "
                            + l.row().receivedBy()
                            + " after_sales "
                            + l.row().afterSales()
                            + (l.row().extended() ? " extended" : ""))));
    checks.add(
        expect(
            "transitions",
            lives,
            l -> l.row() != null && plannedEvents(l.order().plan()).equals(eventsOf(l.row())),
            "paid orders wrote each planned transition's event exactly once and no other",
            l -> l.order().plan() + " wrote " + (l.row() == null ? "nothing" : eventsOf(l.row()))));
    checks.add(
        expect(
            "due times",
            lives.stream()
                .filter(l -> l.order().plan() != Plan.STAY_PAID && l.row() != null)
                .toList(),
            l -> dueTimesAsPlanned(l, periods),
            "shipped orders due as the periods say: receive_due_at = shipped_at + period"
                + " (+ extension), complete_due_at = received_at + window (+ the time the"
                + " after-sale stayed open, by the client's clock)",
            l -> l.order().plan() + " " + dueTimes(l, periods)));
    checks.add(early(lives, coupons));
    checks.add(lag(lives, coupons, shortCoupons, lagBoundMillis));
    checks.add(coupons(coupons, shortCoupons, longCoupons, lockedCoupon, lockedCouponOrderOutcome));
    return checks;
  }

  private static Map<String, Integer> eventsOf(Row row) {
    Map<String, Integer> events = new LinkedHashMap<>();
    EVENTS.forEach(e -> events.put(e, row.events(e)));
    return events;
  }

  private static boolean endedAsPlanned(Life l) {
    Row r = l.row();
    if (r == null) {
      return false;
    }
    Plan plan = l.order().plan();
    if (plan == Plan.STAY_PAID) {
      return r.status().equals("PAID") && r.shippedMs() == null;
    }
    return r.status().equals("COMPLETED")
        && java.util.Objects.equals(r.receivedBy(), plannedReceiver(plan))
        && r.extended() == (plan == Plan.EXTEND)
        && r.afterSales() == (plan == Plan.AFTER_SALE ? 1 : 0);
  }

  /** The completion deadline's extension the client's clock allows: [min, max] ms. */
  private static long[] openBounds(Life l) {
    if (l.order().plan() != Plan.AFTER_SALE) {
      return new long[] {0, 0};
    }
    Call open = l.call("open");
    Call resolve = l.call("resolve");
    if (open == null || resolve == null) {
      return new long[] {-1, -1};
    }
    // the database timed the request from inside the open call to inside the resolve call;
    // 1 ms either side for the DB's and the client's ms truncations
    return new long[] {resolve.sentMs() - open.doneMs() - 1, resolve.doneMs() - open.sentMs() + 1};
  }

  private static boolean dueTimesAsPlanned(Life l, LifecycleSettings periods) {
    Row r = l.row();
    if (r.shippedMs() == null || r.receiveDueMs() == null) {
      return false;
    }
    long receipt =
        periods.receiptPeriod().toMillis()
            + (l.order().plan() == Plan.EXTEND ? periods.receiptExtension().toMillis() : 0);
    if (r.receiveDueMs() - r.shippedMs() != receipt) {
      return false;
    }
    if (r.receivedMs() == null || r.completeDueMs() == null) {
      return false;
    }
    long granted = r.completeDueMs() - r.receivedMs() - periods.afterSaleWindow().toMillis();
    long[] bounds = openBounds(l);
    return granted >= bounds[0] && granted <= bounds[1];
  }

  private static String dueTimes(Life l, LifecycleSettings periods) {
    Row r = l.row();
    long[] bounds = openBounds(l);
    return String.format(
        "receive_due_at - shipped_at %s ms, complete_due_at - received_at - window %s ms"
            + " (allowed %d..%d)",
        diff(r.receiveDueMs(), r.shippedMs()),
        r.completeDueMs() == null || r.receivedMs() == null
            ? "?"
            : String.valueOf(
                r.completeDueMs() - r.receivedMs() - periods.afterSaleWindow().toMillis()),
        bounds[0],
        bounds[1]);
  }

  private static String diff(Long a, Long b) {
    return a == null || b == null ? "?" : String.valueOf(a - b);
  }

  /** No automatic receipt, completion or coupon expiry before its due time. */
  private static Check early(List<Life> lives, Map<String, CouponRow> coupons) {
    List<String> early = new ArrayList<>();
    for (Life l : lives) {
      Row r = l.row();
      if (r == null) {
        continue;
      }
      if ("AUTO".equals(r.receivedBy()) && r.receivedMs() < r.receiveDueMs()) {
        early.add(
            l.order().orderId() + " received " + (r.receiveDueMs() - r.receivedMs()) + " ms early");
      }
      if (r.completedMs() != null && r.completedMs() < r.completeDueMs()) {
        early.add(
            l.order().orderId()
                + " completed "
                + (r.completeDueMs() - r.completedMs())
                + " ms early");
      }
    }
    coupons.forEach(
        (id, c) -> {
          if (c.expiredMs() != null
              && (c.validUntilMs() == null || c.expiredMs() < c.validUntilMs())) {
            early.add("coupon " + id + " expired before its valid_until " + c.validUntilMs());
          }
        });
    return new Check(
        "life early",
        early.isEmpty(),
        early.size()
            + " automatic receipts, completions and coupon expiries before their due time"
            + (early.isEmpty()
                ? ""
                : "; e.g. " + String.join(", ", early.subList(0, Math.min(3, early.size())))));
  }

  /** Each deadline kind's lag behind its due time, from the columns. */
  static Map<String, Histogram> lags(
      List<Life> lives, Map<String, CouponRow> coupons, List<String> sweptCoupons) {
    Map<String, Histogram> lags = new LinkedHashMap<>();
    Histogram receipt = histogram();
    Histogram complete = histogram();
    Histogram expiry = histogram();
    for (Life l : lives) {
      Row r = l.row();
      if (r == null) {
        continue;
      }
      if ("AUTO".equals(r.receivedBy()) && r.receivedMs() != null && r.receiveDueMs() != null) {
        record(receipt, r.receivedMs() - r.receiveDueMs());
      }
      if (r.completedMs() != null && r.completeDueMs() != null) {
        record(complete, r.completedMs() - r.completeDueMs());
      }
    }
    // only the coupons the sweep expires: the locked one expires when its order closes, which is
    // the close lag's business
    sweptCoupons.stream()
        .map(coupons::get)
        .filter(c -> c != null && c.expiredMs() != null && c.validUntilMs() != null)
        .forEach(c -> record(expiry, c.expiredMs() - c.validUntilMs()));
    lags.put("auto receipt", receipt);
    lags.put("auto complete", complete);
    lags.put("coupon expiry", expiry);
    return lags;
  }

  private static Histogram histogram() {
    return new Histogram(86_400_000L, 3);
  }

  private static void record(Histogram h, long lag) {
    h.recordValue(Math.min(86_400_000L, Math.max(0, lag)));
  }

  private static String describe(Histogram lag) {
    return lag.getTotalCount() == 0
        ? "none"
        : String.format(
            "p50 %d ms, p99 %d ms, max %d ms (n=%d)",
            lag.getValueAtPercentile(50),
            lag.getValueAtPercentile(99),
            lag.getMaxValue(),
            lag.getTotalCount());
  }

  private static Check lag(
      List<Life> lives, Map<String, CouponRow> coupons, List<String> swept, long boundMillis) {
    List<String> parts = new ArrayList<>();
    boolean ok = true;
    for (Map.Entry<String, Histogram> e : lags(lives, coupons, swept).entrySet()) {
      Histogram h = e.getValue();
      if (h.getTotalCount() == 0) {
        ok = false; // every kind is planned: none applied is a divergence
        parts.add(e.getKey() + " none applied");
        continue;
      }
      long p99 = h.getValueAtPercentile(99);
      ok &= p99 <= boundMillis;
      parts.add(e.getKey() + " p99 " + p99 + " ms");
    }
    return new Check(
        "life lag", ok, String.join(", ", parts) + " (each <= " + boundMillis + " ms)");
  }

  private static Check coupons(
      Map<String, CouponRow> coupons,
      List<String> shortCoupons,
      List<String> longCoupons,
      String lockedCoupon,
      String lockedCouponOrderOutcome) {
    List<String> diverged = new ArrayList<>();
    shortCoupons.forEach(id -> expectStatus(coupons, id, "EXPIRED", diverged));
    longCoupons.forEach(id -> expectStatus(coupons, id, "AVAILABLE", diverged));
    if (lockedCoupon != null) {
      expectStatus(coupons, lockedCoupon, "EXPIRED", diverged);
      if (!"CLOSED TIMEOUT".equals(lockedCouponOrderOutcome)) {
        diverged.add("the order holding " + lockedCoupon + " ended " + lockedCouponOrderOutcome);
      }
    }
    int total = shortCoupons.size() + longCoupons.size() + (lockedCoupon == null ? 0 : 1);
    return new Check(
        "coupons",
        diverged.isEmpty() && lockedCoupon != null,
        String.format(
            "%d of %d coupons as planned (%d short-lived EXPIRED by the sweep, %d AVAILABLE, %s)%s",
            total - diverged.size(),
            total,
            shortCoupons.size(),
            longCoupons.size(),
            lockedCoupon == null
                ? "no coupon locked by a timed-out order"
                : "1 locked by an order that timed out EXPIRED when it closed",
            diverged.isEmpty() ? "" : "; diverged: " + String.join(", ", diverged)));
  }

  private static void expectStatus(
      Map<String, CouponRow> coupons, String id, String status, List<String> diverged) {
    CouponRow c = coupons.get(id);
    if (c == null || !c.status().equals(status)) {
      diverged.add(id + " " + (c == null ? "missing" : c.status()) + " (planned " + status + ")");
    }
  }

  private static Check expect(
      String name,
      List<Life> population,
      Predicate<Life> holds,
      String what,
      Function<Life, String> why) {
    List<Life> diverged = population.stream().filter(holds.negate()).toList();
    StringBuilder detail =
        new StringBuilder()
            .append(population.size() - diverged.size())
            .append(" of ")
            .append(population.size())
            .append(' ')
            .append(what);
    if (!diverged.isEmpty()) {
      detail.append("; diverged: ");
      detail.append(
          diverged.stream()
              .collect(Collectors.groupingBy(why, TreeMap::new, Collectors.counting()))
              .entrySet()
              .stream()
              .limit(5)
              .map(e -> e.getValue() + " x " + e.getKey())
              .collect(Collectors.joining(", ")));
      detail.append(", e.g. ").append(diverged.get(0).order().orderId());
    }
    boolean ok = diverged.isEmpty() && !population.isEmpty();
    if (population.isEmpty()) {
      detail.append(" (none: the plan had no such orders)");
    }
    return new Check(name, ok, detail.toString());
  }
}
