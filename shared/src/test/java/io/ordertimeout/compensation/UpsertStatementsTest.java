package io.ordertimeout.compensation;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.stream.DeadLetters.DeadLetter;
import io.ordertimeout.testing.TestStack;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The two upserts (a compensation flag seen again, a dead letter stored again) bind their new
 * values a second time instead of ON DUPLICATE KEY UPDATE col = VALUES(col): VALUES() there is
 * deprecated since MySQL 8.0.20 (warning 1287) and the row alias MySQL offers instead is not
 * MariaDB syntax.
 */
class UpsertStatementsTest {
  private static final Pattern VALUES_FUNCTION =
      Pattern.compile("=\\s*VALUES\\s*\\(", Pattern.CASE_INSENSITIVE);

  private TestStack stack;

  @AfterEach
  void tearDown() {
    if (stack != null) {
      stack.close();
    }
  }

  @Test
  void aFlagSeenAgainTakesTheNewEvidenceCountsTheSightingAndReopens() {
    stack = TestStack.create("upsert-flag");
    Flags flags = new Flags(new Tx(stack.app().dataSource()));

    flags.raise(
        new Tally(1, 0), "STOCK_DRIFT", TenantIds.DEFAULT, "sku-up", Map.of("totalMinusSum", -7));
    stack.update("UPDATE compensation_flags SET resolved_at = NOW(3)");
    flags.raise(
        new Tally(1, 0), "STOCK_DRIFT", TenantIds.DEFAULT, "sku-up", Map.of("totalMinusSum", -9));

    assertThat(
            stack.dump(
                "SELECT kind, subject, evidence, seen_count, resolved_at IS NULL"
                    + " FROM compensation_flags"))
        .containsExactly("STOCK_DRIFT|sku-up|{\"totalMinusSum\":-9}|2|1|");
  }

  @Test
  void aDeadLetterStoredAgainUpdatesItsDeliveriesAndErrorsAndKeepsItsPayload() {
    stack = TestStack.create("upsert-dead");
    var deadLetters = stack.app().deadLetters();

    deadLetters.store(
        new DeadLetter(
            "1-1", "close_due", TenantIds.DEFAULT, "o-up", Map.of("v", "first"), 5, List.of("e1")));
    deadLetters.store(
        new DeadLetter(
            "1-1",
            "close_due",
            TenantIds.DEFAULT,
            "o-up",
            Map.of("v", "second"),
            6,
            List.of("e1", "e2")));

    assertThat(
            stack.dump("SELECT entry_id, order_id, payload, deliveries, errors FROM dead_letters"))
        .hasSize(1)
        .singleElement()
        .asString()
        .startsWith("1-1|o-up|")
        .contains("first")
        .doesNotContain("second")
        .endsWith("|6|[\"e1\",\"e2\"]|");
  }

  @Test
  void hugeEvidencePayloadsAndErrorsAreCutSoTheirUpsertsStayUnder16Kb() {
    stack = TestStack.create("upsert-cut");
    Flags flags = new Flags(new Tx(stack.app().dataSource()));
    String huge = "\"订单\"".repeat(12_000); // 48,000 chars, ~96 KB as a literal

    flags.raise(new Tally(1, 0), "STOCK_DRIFT", TenantIds.DEFAULT, "sku-big", Map.of("dump", huge));
    stack
        .app()
        .deadLetters()
        .store(
            new DeadLetter(
                "9-9",
                "close_due",
                TenantIds.DEFAULT,
                "o-big",
                Map.of("e", huge),
                12,
                java.util.Collections.nCopies(12, "x".repeat(1_000))));

    // bytes as stored; the upsert binds evidence twice, and the dead letter's errors twice
    long evidence = stack.count("SELECT LENGTH(evidence) FROM compensation_flags");
    long payload = stack.count("SELECT LENGTH(payload) FROM dead_letters");
    long errors = stack.count("SELECT LENGTH(errors) FROM dead_letters");
    assertThat(evidence).isPositive().isLessThanOrEqualTo(Flags.MAX_EVIDENCE_BYTES);
    assertThat(payload).isPositive();
    assertThat(errors).isPositive();
    assertThat(2 * evidence).isLessThan(io.ordertimeout.mysql.Statements.MAX_BYTES - 1_000);
    assertThat(payload + 2 * errors).isLessThan(io.ordertimeout.mysql.Statements.MAX_BYTES - 1_000);
  }

  @Test
  void noMainStatementUsesTheValuesFunctionInAnUpsert() throws IOException {
    try (Stream<Path> files = Files.walk(Path.of("src/main"))) {
      List<Path> offending =
          files
              .filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".sql"))
              .filter(p -> VALUES_FUNCTION.matcher(read(p)).find())
              .toList();
      assertThat(offending).isEmpty();
    }
  }

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      throw new IllegalStateException(p.toString(), e);
    }
  }
}
