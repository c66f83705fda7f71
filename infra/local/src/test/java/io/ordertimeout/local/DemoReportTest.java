package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.local.DemoReport.Check;
import io.ordertimeout.local.DemoReport.Outcome;
import io.ordertimeout.local.DemoReport.Row;
import io.ordertimeout.local.DemoScenario.ClientView;
import io.ordertimeout.local.DemoScenario.Order;
import io.ordertimeout.local.DemoScenario.Plan;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The demo's checks of its plan on outcome sets built here, without a stack: a plan that went as
 * scripted passes every check, and each kind of divergence fails the check that names it, the
 * report and its verdict line (so {@code ./local demo} exits 1).
 */
class DemoReportTest {
  private static final Instant DEADLINE = Instant.parse("2026-11-30T10:00:10.123Z");
  private static final Instant EARLY = DEADLINE.minusSeconds(5);
  private static final long LAG_BOUND = 1_000;

  private static Outcome outcome(
      int i, Plan plan, String prepay, String act, Instant actedAt, Row row) {
    ClientView view = ClientView.placed(DEADLINE);
    if (prepay != null) {
      view = view.withPrepay(EARLY.minusSeconds(4), prepay);
    }
    if (act != null) {
      view = view.withAction(actedAt, act);
    }
    return new Outcome(new Order("demo-" + i, i, plan), view, row);
  }

  private static Row paid() {
    return new Row("PAID", null, DEADLINE.toEpochMilli(), null);
  }

  @Test
  void aPayerTheSecondActMovedOnStillEndedPaid() {
    List<Outcome> outcomes = asPlanned();
    outcomes.set(
        0,
        outcome(
            0,
            Plan.PAY,
            "200",
            DemoScenario.PAY_SUCCESS,
            EARLY,
            new Row("COMPLETED", null, DEADLINE.toEpochMilli(), null)));
    outcomes.set(
        1,
        outcome(
            1,
            Plan.PAY_AT_DEADLINE,
            "200",
            DemoScenario.PAY_SUCCESS,
            DEADLINE.minusMillis(200),
            new Row("AFTER_SALE", null, DEADLINE.toEpochMilli(), null)));

    List<Check> checks = DemoReport.checks(outcomes, LAG_BOUND);

    assertThat(checks).allMatch(Check::ok);
    assertThat(checks.get(3).detail()).startsWith("2 of 2 payers ended PAID");
  }

  private static Row closed(String reason, long closedAfterDeadlineMillis) {
    return new Row(
        "CLOSED",
        reason,
        DEADLINE.toEpochMilli(),
        DEADLINE.toEpochMilli() + closedAfterDeadlineMillis);
  }

  /** One order of each plan, each ending as its script means it to. */
  private static List<Outcome> asPlanned() {
    return new ArrayList<>(
        List.of(
            outcome(0, Plan.PAY, "200", DemoScenario.PAY_SUCCESS, EARLY, paid()),
            outcome(
                1,
                Plan.PAY_AT_DEADLINE,
                "200",
                DemoScenario.PAY_SUCCESS,
                DEADLINE.minusMillis(200),
                paid()),
            outcome(
                2,
                Plan.PAY_AT_DEADLINE,
                "200",
                "refused by WeChat (CLOSED)",
                DEADLINE.minusMillis(100),
                closed("TIMEOUT", 40)),
            outcome(3, Plan.PREPAY_ONLY, "200", null, null, closed("TIMEOUT", 60)),
            outcome(4, Plan.CANCEL, null, "202", EARLY, closed("USER_CANCEL", -4_990)),
            outcome(5, Plan.TIMEOUT, null, null, null, closed("TIMEOUT", 30))));
  }

  private static List<Check> failed(List<Outcome> outcomes) {
    return DemoReport.checks(outcomes, LAG_BOUND).stream().filter(c -> !c.ok()).toList();
  }

  private static String printed(List<Check> checks) {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    new DemoScenario.Report(List.of(), Map.of(), List.of(), checks)
        .print(new PrintStream(buffer, true, StandardCharsets.UTF_8));
    return buffer.toString(StandardCharsets.UTF_8);
  }

  @Test
  void anOutcomeAsPlannedPassesEveryCheck() {
    List<Check> checks = DemoReport.checks(asPlanned(), LAG_BOUND);

    assertThat(checks)
        .extracting(Check::name)
        .containsExactly(
            "placed",
            "deadlines",
            "prepays",
            "payers",
            "cancels",
            "abandoners",
            "early",
            "close lag");
    assertThat(checks).allMatch(Check::ok);
    assertThat(checks.get(3).detail()).startsWith("2 of 2 payers ended PAID");
    assertThat(checks.get(7).detail()).startsWith("p99 60 ms <= 1000 ms");
    assertThat(printed(checks).strip()).endsWith("invariants: OK\ndemo: OK");
  }

  @Test
  void aPayerWhoEndedClosedFailsTheDemo() {
    List<Outcome> outcomes = asPlanned();
    outcomes.set(
        0, outcome(0, Plan.PAY, "200", DemoScenario.PAY_SUCCESS, EARLY, closed("TIMEOUT", 20)));

    List<Check> checks = DemoReport.checks(outcomes, LAG_BOUND);
    DemoScenario.Report report = new DemoScenario.Report(List.of(), Map.of(), List.of(), checks);

    assertThat(failed(outcomes)).extracting(Check::name).containsExactly("payers");
    assertThat(report.ok()).isFalse();
    assertThat(printed(checks))
        .contains("FAILED payers      1 of 2 payers ended PAID")
        .contains("diverged: 1 x CLOSED TIMEOUT (prepay 200, pay WeChat SUCCESS), e.g. demo-0")
        .contains("invariants: OK\ndemo: FAILED (payers: 1 of 2");
  }

  static Stream<Arguments> divergences() {
    return Stream.of(
        Arguments.of(
            "prepays refused, as in Asia/Shanghai before the time-zone fix",
            (UnaryOperator<List<Outcome>>)
                o -> {
                  o.set(
                      0,
                      outcome(
                          0,
                          Plan.PAY,
                          "409 ORDER_EXPIRED",
                          "no WeChat trade",
                          EARLY,
                          closed("TIMEOUT", 20)));
                  o.set(
                      3,
                      outcome(
                          3,
                          Plan.PREPAY_ONLY,
                          "409 ORDER_EXPIRED",
                          null,
                          null,
                          closed("TIMEOUT", 20)));
                  return o;
                },
            List.of("prepays", "payers"),
            "2 of 4 planned prepays sent before the deadline answered 200; diverged: 2 x prepay 409"
                + " ORDER_EXPIRED"),
        Arguments.of(
            "a cancel that timed out",
            (UnaryOperator<List<Outcome>>)
                o -> {
                  o.set(4, outcome(4, Plan.CANCEL, null, "202", EARLY, closed("TIMEOUT", 20)));
                  return o;
                },
            List.of("cancels"),
            "0 of 1 cancels sent before the deadline ended CLOSED USER_CANCEL; diverged: 1 x CLOSED"
                + " TIMEOUT (cancel 202)"),
        Arguments.of(
            "an abandoned order cancelled",
            (UnaryOperator<List<Outcome>>)
                o -> {
                  o.set(5, outcome(5, Plan.TIMEOUT, null, null, null, closed("USER_CANCEL", 20)));
                  return o;
                },
            List.of("abandoners"),
            "2 of 3 abandoned orders"),
        Arguments.of(
            "a close 1 ms before the client's deadline",
            (UnaryOperator<List<Outcome>>)
                o -> {
                  o.set(5, outcome(5, Plan.TIMEOUT, null, null, null, closed("TIMEOUT", -1)));
                  return o;
                },
            List.of("early"),
            "1 of 3 TIMEOUT closes before the POST answer's expireAt; earliest demo-5 closed at"
                + " 2026-11-30T10:00:10.122Z, 1 ms before its deadline 2026-11-30T10:00:10.123Z"),
        Arguments.of(
            "a deadline stored 8 hours early",
            (UnaryOperator<List<Outcome>>)
                o -> {
                  Outcome t = o.get(5);
                  o.set(
                      5,
                      new Outcome(
                          t.order(),
                          t.client(),
                          new Row(
                              "CLOSED",
                              "TIMEOUT",
                              DEADLINE.toEpochMilli() - 28_800_000,
                              t.row().closedAtMillis())));
                  return o;
                },
            List.of("deadlines"),
            "5 of 6 DB expire_at equal to the POST answer's expireAt to the ms; diverged: 1 x DB"
                + " expire_at -28800000 ms off"),
        Arguments.of(
            "close lag over the bound",
            (UnaryOperator<List<Outcome>>)
                o -> {
                  o.set(5, outcome(5, Plan.TIMEOUT, null, null, null, closed("TIMEOUT", 1_500)));
                  return o;
                },
            List.of("close lag"),
            "p99 1500 ms > 1000 ms"),
        Arguments.of(
            "an order not placed",
            (UnaryOperator<List<Outcome>>)
                o -> {
                  o.set(5, new Outcome(new Order("demo-5", 5, Plan.TIMEOUT), null, null));
                  return o;
                },
            List.of("placed"),
            "5 of 6 orders placed (POST 201) and in the database; diverged: 1 x not placed"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("divergences")
  void eachDivergenceFailsTheCheckThatNamesIt(
      String what, UnaryOperator<List<Outcome>> diverge, List<String> failing, String detail) {
    List<Outcome> outcomes = diverge.apply(asPlanned());

    List<Check> failed = failed(outcomes);

    assertThat(failed).extracting(Check::name).containsExactlyElementsOf(failing);
    assertThat(failed.get(0).detail()).startsWith(detail);
    assertThat(printed(DemoReport.checks(outcomes, LAG_BOUND)))
        .contains("demo: FAILED (" + failing.get(0) + ": " + detail);
  }

  @Test
  void aPaymentTheScriptMadeAfterTheDeadlineIsNotCountedAgainstTheSystem() {
    List<Outcome> outcomes = asPlanned();
    outcomes.set(
        0,
        outcome(
            0,
            Plan.PAY,
            "200",
            "refused by WeChat (CLOSED)",
            DEADLINE.plusMillis(5),
            closed("TIMEOUT", 3)));

    List<Check> checks = DemoReport.checks(outcomes, LAG_BOUND);

    assertThat(checks).allMatch(Check::ok);
    assertThat(checks.get(3).detail())
        .isEqualTo(
            "1 of 1 payers ended PAID (PAY prepaid and paid before the deadline by the client's"
                + " clock, and every payment WeChat took) (1 PAY paid at or after the deadline by"
                + " the client's clock, not counted)");
  }
}
