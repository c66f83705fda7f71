package io.ordertimeout.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TableTest {

  @Test
  void columnsAreAsWideAsTheirWidestCellAndNoLineEndsInBlanks() {
    Table t = new Table("ID", "NAME", "NOTE").row(1, "sweep", null).row(1234, "x", "long note");

    assertThat(t.render())
        .isEqualTo(
            """
            ID    NAME   NOTE
            1     sweep  -
            1234  x      long note
            """);
    assertThat(Table.unheaded(2).row("a", "").row("bbb", "c").render()).isEqualTo("a\nbbb  c\n");
  }

  @Test
  void aRowOfTheWrongWidthIsRefused() {
    assertThatThrownBy(() -> new Table("A", "B").row("only one"))
        .hasMessage("a row of 1 cells under 2 columns");
  }
}
