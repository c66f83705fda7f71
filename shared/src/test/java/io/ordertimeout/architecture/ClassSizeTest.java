package io.ordertimeout.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * STYLE.md aims for small classes: a class of shared's main code over 300 lines must say why in its
 * class comment ("Over 300 lines: ..."), so growing past the bound is a decision someone wrote
 * down, not drift.
 */
class ClassSizeTest {
  private static final int MAX_LINES = 300;
  // the last Javadoc before the first top-level type declaration (public or package-private)
  private static final Pattern CLASS_COMMENT =
      Pattern.compile(
          "(?s)^.*?(/\\*\\*(?:(?!\\*/).)*\\*/)\\s*(?:@\\w+(?:\\([^)]*\\))?\\s*)*"
              + "(?:public\\s+)?(?:final\\s+|abstract\\s+)*(?:class|interface|record|enum)\\s");

  @Test
  void classesOver300LinesGiveAReasonInTheirClassComment() throws IOException {
    List<String> unexplained;
    try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
      unexplained =
          files
              .filter(f -> f.toString().endsWith(".java"))
              .filter(ClassSizeTest::overBoundWithoutReason)
              .map(Path::toString)
              .toList();
    }
    assertThat(unexplained).as("classes over %d lines without a reason", MAX_LINES).isEmpty();
  }

  private static boolean overBoundWithoutReason(Path file) {
    try {
      List<String> lines = Files.readAllLines(file);
      if (lines.size() <= MAX_LINES) {
        return false;
      }
      Matcher comment = CLASS_COMMENT.matcher(String.join("\n", lines));
      return !(comment.find() && comment.group(1).contains("Over 300 lines: "));
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + file, e);
    }
  }
}
