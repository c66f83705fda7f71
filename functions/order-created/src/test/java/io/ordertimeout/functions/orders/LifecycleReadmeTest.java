package io.ordertimeout.functions.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.lifecycle.Transition;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The HTTP API reference (docs/reference/http-api.md) documents what the code does: its state
 * machine table is {@link Transition}, row for row, and every route this function serves has its
 * contract heading.
 */
class LifecycleReadmeTest {
  private static final Path README = Path.of("../../docs/reference/http-api.md");
  private static final String HEADER =
      "| transition | from | to | trigger | cancels | schedules | event |";

  /** One table row as the reference writes it, from the enum constant. */
  static String row(Transition t) {
    String trigger =
        switch (t.trigger()) {
          case ROUTE -> "route";
          case NOTIFICATION -> "notification";
          case DEADLINE -> "deadline " + t.deadline().orElseThrow();
        };
    return "| `"
        + t.name()
        + "` | "
        + t.from()
        + " | "
        + t.to()
        + " | "
        + trigger
        + " | "
        + kind(t.cancels())
        + " | "
        + kind(t.schedules())
        + " | `"
        + t.event().wireName()
        + "` |";
  }

  private static String kind(Optional<DeadlineKind> kind) {
    return kind.map(Enum::name).orElse("-");
  }

  /** The rows under the table's header, up to the first line that is not a row. */
  static List<String> table(String readme) {
    List<String> lines = readme.lines().toList();
    int at = lines.indexOf(HEADER);
    assertThat(at).as("the API reference has the state machine table").isNotNegative();
    List<String> rows = new ArrayList<>();
    for (int i = at + 2; i < lines.size() && lines.get(i).startsWith("| "); i++) {
      rows.add(lines.get(i));
    }
    return rows;
  }

  @Test
  void theStateMachineTableIsTheTransitionEnum() throws IOException {
    List<String> documented = table(Files.readString(README));

    assertThat(documented)
        .containsExactlyElementsOf(
            Arrays.stream(Transition.values()).map(LifecycleReadmeTest::row).toList());
  }

  @Test
  void aTransitionMissingFromTheTableOrAWrongCellIsFound() {
    String readme =
        "x\n"
            + HEADER
            + "\n| --- |\n"
            + row(Transition.SHIP)
            + "\n| `SHIP` | PAID | X |\n\nafter\n";

    assertThat(table(readme)).containsExactly(row(Transition.SHIP), "| `SHIP` | PAID | X |");
    assertThat(row(Transition.AUTO_RECEIVE))
        .isEqualTo(
            "| `AUTO_RECEIVE` | SHIPPED | RECEIVED | deadline AUTO_RECEIPT | AUTO_RECEIPT |"
                + " AUTO_COMPLETE | `received` |");
  }

  @Test
  void everyRouteOfThisFunctionHasItsContractInTheReadme() throws IOException {
    String readme = Files.readString(README);

    for (String route : OrderApiHandler.ROUTE_KEYS) {
      assertThat(readme).as("API reference contract of %s", route).contains("### `" + route + "`");
    }
  }
}
