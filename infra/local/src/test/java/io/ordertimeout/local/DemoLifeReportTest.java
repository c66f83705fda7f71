package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.lifecycle.LifecycleSettings;
import io.ordertimeout.local.DemoLife.Call;
import io.ordertimeout.local.DemoLife.Plan;
import io.ordertimeout.local.DemoLifeReport.CouponRow;
import io.ordertimeout.local.DemoLifeReport.Life;
import io.ordertimeout.local.DemoLifeReport.Row;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The second act's checks on made-up outcomes: a life as planned passes every check, and each kind
 * of divergence fails the check that names it (a report that cannot fail proves nothing).
 */
class DemoLifeReportTest {

  private static final LifecycleSettings PERIODS =
      new LifecycleSettings(Duration.ofSeconds(3), Duration.ofSeconds(2), Duration.ofSeconds(3));
  private static final long T = 1_700_000_000_000L;
  private static final List<String> SHORT = List.of("s-0", "s-1");
  private static final List<String> LONG = List.of("l-0");

  /** One order of each plan, living exactly as planned, with lags of 20-60 ms. */
  private static List<Life> asPlanned() {
    List<Life> lives = new ArrayList<>();
    // shipped at T; confirmed at T+1000; completed 20 ms after T+4000
    lives.add(
        life(
            "o-confirm",
            Plan.CONFIRM,
            calls("ship", T - 5, T, "confirm", T + 995, T + 1000),
            new Row(
                "COMPLETED",
                "USER",
                0,
                false,
                T,
                T + 3000,
                T + 1000,
                T + 4000,
                T + 4020,
                events(1, 0, 1, 0, 0, 1))));
    // received AUTO 30 ms after T+3000, completed 40 ms after T+6030
    lives.add(
        life(
            "o-auto",
            Plan.AUTO_RECEIVE,
            calls("ship", T - 5, T),
            new Row(
                "COMPLETED",
                "AUTO",
                0,
                false,
                T,
                T + 3000,
                T + 3030,
                T + 6030,
                T + 6070,
                events(1, 0, 1, 0, 0, 1))));
    lives.add(
        life(
            "o-extend",
            Plan.EXTEND,
            calls("ship", T - 5, T, "extend", T + 995, T + 1000),
            new Row(
                "COMPLETED",
                "AUTO",
                0,
                true,
                T,
                T + 5000,
                T + 5050,
                T + 8050,
                T + 8060,
                events(1, 1, 1, 0, 0, 1))));
    // confirmed at T+500, open T+1500 .. T+2500 (the DB saw 1002 ms), completed after
    // T+500+3000+1002
    lives.add(
        life(
            "o-after-sale",
            Plan.AFTER_SALE,
            calls(
                "ship", T - 5, T, "confirm", T + 495, T + 500, "open", T + 1499, T + 1501,
                "resolve", T + 2502, T + 2504),
            new Row(
                "COMPLETED",
                "USER",
                1,
                false,
                T,
                T + 3000,
                T + 500,
                T + 4502,
                T + 4560,
                events(1, 0, 1, 1, 1, 1))));
    lives.add(
        life(
            "o-paid",
            Plan.STAY_PAID,
            Map.of(),
            new Row("PAID", null, 0, false, null, null, null, null, null, Map.of())));
    return lives;
  }

  private static Map<String, CouponRow> coupons() {
    Map<String, CouponRow> coupons = new HashMap<>();
    coupons.put("s-0", new CouponRow("EXPIRED", T, T + 30));
    coupons.put("s-1", new CouponRow("EXPIRED", T, T + 45));
    coupons.put("l-0", new CouponRow("AVAILABLE", T + 3_600_000, null));
    coupons.put("locked", new CouponRow("EXPIRED", T, T + 900));
    return coupons;
  }

  @Test
  void aLifeAsPlannedPassesEveryCheck() {
    List<DemoReport.Check> checks = checks(asPlanned(), coupons(), "CLOSED TIMEOUT");

    assertThat(checks)
        .extracting(DemoReport.Check::name)
        .containsExactly(
            "calls", "lives", "transitions", "due times", "life early", "life lag", "coupons");
    assertThat(checks).allSatisfy(c -> assertThat(c.ok()).as(c.line()).isTrue());
    assertThat(String.join("\n", DemoLifeReport.lines(asPlanned(), coupons(), SHORT, PERIODS)))
        .contains("  shipped                                                 4 / 4")
        .contains("  received by AUTO                                        2 / 2")
        .contains("  auto complete            p50 20 ms, p99 58 ms, max 58 ms (n=4)")
        .contains("  auto receipt             p50 30 ms, p99 50 ms, max 50 ms (n=2)")
        .contains("  coupon expiry            p50 30 ms, p99 45 ms, max 45 ms (n=2)");
  }

  @Test
  void aRefusedCallFailsCalls() {
    List<Life> lives =
        replace(
            asPlanned(),
            "o-extend",
            l ->
                new Life(
                    l.order(),
                    calls(
                        "ship", T - 5, T, "extend", T + 995, T + 1000, "RECEIPT_ALREADY_EXTENDED"),
                    l.row()));

    assertFailed(
        checks(lives, coupons(), "CLOSED TIMEOUT"),
        "calls",
        "1 x EXTEND ship changed, extend RECEIPT_ALREADY_EXTENDED, e.g. o-extend");
  }

  @Test
  void receivedByTheWrongTriggerFailsLives() {
    List<Life> lives =
        replace(
            asPlanned(),
            "o-auto",
            l -> new Life(l.order(), l.calls(), withReceivedBy(l.row(), "USER")));

    assertFailed(
        checks(lives, coupons(), "CLOSED TIMEOUT"),
        "lives",
        "1 x AUTO_RECEIVE ended COMPLETED received_by USER after_sales 0, e.g. o-auto");
  }

  @Test
  void aTransitionTwiceFailsTransitions() {
    List<Life> lives =
        replace(
            asPlanned(),
            "o-auto",
            l -> {
              Row r = l.row();
              return new Life(
                  l.order(),
                  l.calls(),
                  new Row(
                      r.status(),
                      r.receivedBy(),
                      r.afterSales(),
                      r.extended(),
                      r.shippedMs(),
                      r.receiveDueMs(),
                      r.receivedMs(),
                      r.completeDueMs(),
                      r.completedMs(),
                      events(1, 0, 2, 0, 0, 1)));
            });

    assertFailed(checks(lives, coupons(), "CLOSED TIMEOUT"), "transitions", "received=2");
  }

  @Test
  void aCompletionDeadlineNotMovedByTheAfterSaleFailsDueTimes() {
    List<Life> lives =
        replace(
            asPlanned(),
            "o-after-sale",
            l -> {
              Row r = l.row();
              return new Life(
                  l.order(),
                  l.calls(),
                  new Row(
                      r.status(),
                      r.receivedBy(),
                      r.afterSales(),
                      r.extended(),
                      r.shippedMs(),
                      r.receiveDueMs(),
                      r.receivedMs(),
                      T + 3500,
                      T + 3520,
                      r.events()));
            });

    assertFailed(
        checks(lives, coupons(), "CLOSED TIMEOUT"),
        "due times",
        "complete_due_at - received_at - window 0 ms (allowed 1000..1006)");
  }

  @Test
  void anEarlyAutomaticReceiptFailsLifeEarly() {
    List<Life> lives =
        replace(
            asPlanned(),
            "o-auto",
            l -> {
              Row r = l.row();
              return new Life(
                  l.order(),
                  l.calls(),
                  new Row(
                      r.status(),
                      r.receivedBy(),
                      r.afterSales(),
                      r.extended(),
                      r.shippedMs(),
                      r.receiveDueMs(),
                      T + 2999,
                      T + 5999,
                      T + 6010,
                      r.events()));
            });

    assertFailed(
        checks(lives, coupons(), "CLOSED TIMEOUT"), "life early", "o-auto received 1 ms early");
  }

  @Test
  void aLagAboveTheBoundFailsLifeLag() {
    Map<String, CouponRow> coupons = coupons();
    coupons.put("s-1", new CouponRow("EXPIRED", T, T + 1_500));

    assertFailed(
        checks(asPlanned(), coupons, "CLOSED TIMEOUT"), "life lag", "coupon expiry p99 1500 ms");
  }

  @Test
  void aCouponNotExpiredOrAnOrderNotClosedFailsCoupons() {
    Map<String, CouponRow> coupons = coupons();
    coupons.put("s-0", new CouponRow("AVAILABLE", T, null));

    assertFailed(
        checks(asPlanned(), coupons, "CLOSED TIMEOUT"),
        "coupons",
        "s-0 AVAILABLE (planned EXPIRED)");
    assertFailed(
        checks(asPlanned(), coupons(), "not in the database"),
        "coupons",
        "the order holding locked ended not in the database");
  }

  private static void assertFailed(List<DemoReport.Check> checks, String name, String detail) {
    assertThat(checks)
        .filteredOn(c -> !c.ok())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.name()).isEqualTo(name);
              assertThat(c.detail()).contains(detail);
            });
  }

  private static List<DemoReport.Check> checks(
      List<Life> lives, Map<String, CouponRow> coupons, String lockedOrderOutcome) {
    return DemoLifeReport.checks(
        lives, coupons, SHORT, LONG, "locked", lockedOrderOutcome, PERIODS, 1_000);
  }

  private static Life life(String id, Plan plan, Map<String, Call> calls, Row row) {
    return new Life(new DemoLife.Order(id, plan), calls, row);
  }

  /** name, sent, done triples, each answered "changed"; a trailing string answers the last. */
  private static Map<String, Call> calls(Object... spec) {
    Map<String, Call> calls = new LinkedHashMap<>();
    String last = null;
    for (int i = 0; i < spec.length; ) {
      if (i + 2 >= spec.length) {
        Call c = calls.get(last);
        calls.put(last, new Call(c.sentMs(), c.doneMs(), (String) spec[i]));
        break;
      }
      last = (String) spec[i];
      calls.put(last, new Call((Long) spec[i + 1], (Long) spec[i + 2], Call.CHANGED));
      i += 3;
    }
    return calls;
  }

  private static Map<String, Integer> events(int... counts) {
    Map<String, Integer> events = new HashMap<>();
    for (int i = 0; i < counts.length; i++) {
      if (counts[i] > 0) {
        events.put(DemoLifeReport.EVENTS.get(i), counts[i]);
      }
    }
    return events;
  }

  private static Row withReceivedBy(Row r, String by) {
    return new Row(
        r.status(),
        by,
        r.afterSales(),
        r.extended(),
        r.shippedMs(),
        r.receiveDueMs(),
        r.receivedMs(),
        r.completeDueMs(),
        r.completedMs(),
        r.events());
  }

  private static List<Life> replace(List<Life> lives, String id, UnaryOperator<Life> change) {
    return lives.stream().map(l -> l.order().orderId().equals(id) ? change.apply(l) : l).toList();
  }
}
