package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Runs {@code ./local demo} with a small N through the same code path as the command. */
@Tag("integration")
class DemoTest {

  @Test
  void demoWith200OrdersPassesEveryCheckOfItsPlanAndTheInvariants() {
    DemoScenario.Settings settings = new DemoScenario.Settings(200, 3, 42);
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);

    DemoScenario.Report report;
    List<RecordingProxy.Answered> exchanges;
    try (LocalStack stack =
        LocalStack.start(
            new LocalStack.Options(Main.templatePath(), "127.0.0.1", 0, 1.0),
            DemoScenario.environment(System.getenv()))) {
      ApiWireTap tap = ApiWireTap.attach(stack);
      report = new DemoScenario(stack, settings, out).run();
      report.print(out);
      exchanges = tap.exchanges();
    }
    // every request the demo and WeChat's notifications sent, and every answer, is as
    // docs/reference/openapi.yaml says
    System.out.printf("demo: %d exchanges checked against openapi.yaml%n", exchanges.size());
    assertThat(exchanges).hasSizeGreaterThan(200);
    assertThat(ContractTest.conformance(exchanges))
        .as("exchanges that differ from openapi.yaml")
        .isEmpty();

    String printed = buffer.toString(StandardCharsets.UTF_8);
    // the whole report in the build log: a failure names the check, this shows why
    System.out.print(printed);
    assertThat(report.violations()).isEmpty();
    assertThat(report.failedChecks()).isEmpty();
    assertThat(report.checks())
        .extracting(DemoReport.Check::name)
        .containsExactly(
            "placed",
            "deadlines",
            "prepays",
            "payers",
            "cancels",
            "abandoners",
            "early",
            "close lag",
            "calls",
            "lives",
            "transitions",
            "due times",
            "life early",
            "life lag",
            "coupons",
            "reconciliation");
    assertThat(printed.strip()).endsWith("invariants: OK\ndemo: OK");
    assertThat(printed)
        .contains("OK     placed      200 of 200 orders placed")
        .contains("OK     deadlines   200 of 200 DB expire_at equal")
        .containsPattern("OK     payers      [1-9][0-9]* of [1-9][0-9]* payers ended PAID")
        .containsPattern("OK     close lag   p99 [0-9]+ ms <= 1000 ms");
    assertThat(report.outcome("placed")).isEqualTo(200);
    assertThat(report.outcome("UNPAID")).isZero();
    assertThat(
            report.outcome("PAID")
                + report.outcome("COMPLETED")
                + report.outcome("CLOSED TIMEOUT")
                + report.outcome("CLOSED USER_CANCEL"))
        .isEqualTo(200);
    assertThat(printed).contains("close lag (TIMEOUT closes");
    // the second act: every plan of the life after payment had orders, every deadline kind fired
    assertThat(report.outcome("COMPLETED")).isPositive();
    assertThat(printed)
        .containsPattern("OK     lives       ([1-9][0-9]*) of \\1 paid orders ended as planned")
        .containsPattern("OK     transitions ([1-9][0-9]*) of \\1 paid orders wrote each planned")
        .containsPattern(
            "OK     life lag    auto receipt p99 [0-9]+ ms, auto complete p99 [0-9]+ ms,"
                + " coupon expiry p99 [0-9]+ ms")
        .contains("OK     coupons     16 of 16 coupons as planned")
        .containsPattern(
            "OK     reconciliation [1-9][0-9]* bill lines, 0 flags, the lost notification applied")
        .containsPattern("lost notification of d[0-9a-f]+lost: found by the bill, order PAID")
        .containsPattern(
            "reconciliation against the trade bill of [0-9-]+: [1-9][0-9]* lines, .*, 0 flags")
        .containsPattern("  plan (CONFIRM|AUTO_RECEIVE|EXTEND|AFTER_SALE|STAY_PAID) +[1-9]")
        .containsPattern("  received by AUTO +([1-9][0-9]*) / \\1");
  }
}
