package io.ordertimeout.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.testing.TestStack;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link Statements#cutToBytes}: the prefix written as a literal fits, and nothing is cut early.
 * {@link Statements.Rows}: every row inserted, values as bound, in statements under the limit.
 */
class StatementsTest {
  @Test
  void rowsAreInsertedAsBoundInStatementsUnderTheLimit() throws SQLException {
    try (TestStack stack = TestStack.create("stmt-rows");
        Connection c = stack.app().dataSource().getConnection();
        Statement st = c.createStatement()) {
      st.execute(
          "CREATE TABLE rows_probe (n INT PRIMARY KEY, label VARCHAR(200), note VARCHAR(10) NULL,"
              + " kind VARCHAR(8) NOT NULL)");
      long statementsBefore = inserts(st);
      List<String> labels = new ArrayList<>();
      Statements.Rows rows =
          new Statements.Rows(
              c, "INSERT INTO rows_probe (n, label, note, kind) VALUES", "(?,?,?,'X')");
      for (int n = 0; n < 2_000; n++) {
        // quotes and backslashes are escaped, CJK takes 3 bytes: ~100 bytes of text a row
        String label = "it's \\ \"订单\" " + "x".repeat(60) + n;
        labels.add(label);
        rows.add(n, label, n % 2 == 0 ? null : "odd");
      }

      assertThat(rows.execute()).isEqualTo(2_000);
      long statements = inserts(st) - statementsBefore;
      assertThat(statements)
          .as("~200 KB of rows in statements of at most 16 KB")
          .isBetween(13L, 20L);
      try (ResultSet rs =
          st.executeQuery("SELECT n, label, note, kind FROM rows_probe ORDER BY n")) {
        int n = 0;
        while (rs.next()) {
          assertThat(rs.getInt(1)).isEqualTo(n);
          assertThat(rs.getString(2)).isEqualTo(labels.get(n));
          assertThat(rs.getString(3)).isEqualTo(n % 2 == 0 ? null : "odd");
          assertThat(rs.getString(4)).isEqualTo("X");
          n++;
        }
        assertThat(n).isEqualTo(2_000);
      }
      assertThat(new Statements.Rows(c, "INSERT INTO rows_probe (n) VALUES", "(?)").execute())
          .as("no rows, no statement")
          .isZero();
      assertThat(inserts(st) - statementsBefore).isEqualTo(statements);
    }
  }

  private static long inserts(Statement st) throws SQLException {
    try (ResultSet rs = st.executeQuery("SHOW SESSION STATUS LIKE 'Com_insert'")) {
      rs.next();
      return rs.getLong(2);
    }
  }

  @Test
  void aShortTextIsKeptWhole() {
    assertThat(Statements.cutToBytes("{\"a\":1}", 100)).isEqualTo("{\"a\":1}");
  }

  @Test
  void aLongTextIsCutToTheLongestPrefixWhoseLiteralFits() {
    // quotes are escaped (2 bytes each), CJK takes 3 bytes, an emoji 4 (two chars, never split)
    String text = "\"订单\"😀".repeat(5_000);

    String cut = Statements.cutToBytes(text, 7_000);

    assertThat(text).startsWith(cut);
    assertThat(Statements.literalBytes(cut)).isLessThanOrEqualTo(7_000);
    String oneMore =
        text.substring(0, cut.length() + Character.charCount(text.codePointAt(cut.length())));
    assertThat(Statements.literalBytes(oneMore)).isGreaterThan(7_000);
    assertThat(Character.isHighSurrogate(cut.charAt(cut.length() - 1))).isFalse();
  }
}
