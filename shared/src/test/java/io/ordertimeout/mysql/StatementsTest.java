package io.ordertimeout.mysql;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@link Statements#cutToBytes}: the prefix written as a literal fits, and nothing is cut early.
 */
class StatementsTest {
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
