package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Runs {@code ./local demo} with a small N through the same code path as the command. */
class DemoTest {

  @Test
  void demoWith200OrdersPassesEveryCheckOfItsPlanAndTheInvariants() {
    DemoScenario.Settings settings = new DemoScenario.Settings(200, 3, 42);
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);

    DemoScenario.Report report;
    try (LocalStack stack =
        LocalStack.start(
            new LocalStack.Options(Main.templatePath(), "127.0.0.1", 0, 1.0), System.getenv())) {
      report = new DemoScenario(stack, settings, out).run();
      report.print(out);
    }

    String printed = buffer.toString(StandardCharsets.UTF_8);
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
            "close lag");
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
                + report.outcome("CLOSED TIMEOUT")
                + report.outcome("CLOSED USER_CANCEL"))
        .isEqualTo(200);
    assertThat(printed).contains("close lag (TIMEOUT closes");
  }
}
