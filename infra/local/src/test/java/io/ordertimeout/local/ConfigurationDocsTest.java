package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The configuration reference cannot drift from the code: every {@code OTC_*} variable the
 * functions' code reads (a string literal of shared's and the functions' main code) has a row in a
 * table of docs/, and every variable a row names is read by that code or its resources (the log
 * configuration), unless the row itself says it is "read by no code" (a deploy-time revision).
 */
class ConfigurationDocsTest {
  private static final Path ROOT = Main.templatePath().toAbsolutePath().getParent();
  private static final Pattern LITERAL = Pattern.compile("\"(OTC_[A-Z0-9_]+)\"");
  private static final Pattern ROW = Pattern.compile("^\\| ([^|]+) \\|(.*)$");
  private static final Pattern NAME = Pattern.compile("`(OTC_[A-Z0-9_]+|_[A-Z0-9_]+)`");

  @Test
  void everyVariableTheCodeReadsIsDocumentedAndEveryDocumentedOneIsRead() throws IOException {
    Set<String> read = new TreeSet<>();
    StringBuilder resources = new StringBuilder();
    for (String module : List.of("shared", "functions")) {
      try (Stream<Path> files = Files.walk(ROOT.resolve(module))) {
        for (Path f : files.filter(Files::isRegularFile).toList()) {
          String path = ROOT.relativize(f).toString().replace('\\', '/');
          if (path.contains("/target/") || !path.contains("/src/main/")) {
            continue;
          }
          String text = Files.readString(f);
          if (path.endsWith(".java")) {
            Matcher m = LITERAL.matcher(text);
            while (m.find()) {
              read.add(m.group(1));
            }
          } else {
            resources.append(text);
          }
        }
      }
    }
    Set<String> documented = new TreeSet<>();
    Set<String> readByNoCode = new TreeSet<>();
    for (Path f : Docs.files(ROOT)) {
      for (String line : Docs.prose(Docs.read(f)).values()) {
        Matcher row = ROW.matcher(line);
        if (!row.matches()) {
          continue;
        }
        Matcher name = NAME.matcher(row.group(1));
        String first = null;
        while (name.find()) {
          String n = name.group(1);
          if (n.startsWith("OTC_")) {
            first = n;
          } else if (first != null) {
            // `OTC_WECHAT_MCHID`, `_APPID`: the shorthand shares the first name's prefix
            n = first.substring(0, first.indexOf('_', 4)) + n;
          } else {
            continue;
          }
          documented.add(n);
          if (row.group(2).contains("read by no code")) {
            readByNoCode.add(n);
          }
        }
      }
    }

    assertThat(read).as("variables the code reads").hasSizeGreaterThan(40);
    assertThat(documented).as("variables the code reads, documented").containsAll(read);
    Set<String> unread = new TreeSet<>(documented);
    unread.removeAll(read);
    unread.removeAll(readByNoCode);
    unread.removeIf(n -> resources.indexOf(n) >= 0);
    assertThat(unread).as("documented variables no code reads").isEmpty();
  }
}
