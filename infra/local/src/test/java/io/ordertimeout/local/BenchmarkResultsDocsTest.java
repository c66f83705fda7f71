package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README's figures cannot drift from the results they quote: every row of its "What is
 * measured" table links the page its figures come from (a current results file under
 * docs/benchmarks/results/, not a superseded one, or another page of the docs), and every figure of
 * the row's "measured" cell is in that page with its unit. Every results file is dated and states
 * the commit, the machine and the command that produced it; a superseded one names what replaced
 * it; the benchmarks page links every current one.
 */
class BenchmarkResultsDocsTest {
  private static final Path ROOT = Main.templatePath().toAbsolutePath().getParent();
  private static final Path RESULTS = ROOT.resolve("docs/benchmarks/results");
  private static final Path SUPERSEDED = RESULTS.resolve("superseded");
  private static final Path HOW_TO = ROOT.resolve("docs/benchmarks/README.md");

  private static final String NUMBER = "\\d[\\d,]*(?:\\.\\d+)?(?:-\\d[\\d,]*(?:\\.\\d+)?)?";

  /**
   * A figure: a number (or a range, "378-604") not part of a word ("p99"), and its unit if it has
   * one; a rate may name what it counts ("645 placements/s" is 645 a second).
   */
  private static final Pattern FIGURE =
      Pattern.compile(
          "(?<![\\w.,-])("
              + NUMBER
              + ")(?:\\s?(%|x|ms|s|us|KB|MB|GB|GiB|(?:[a-z]+)?/s)(?![\\w/]))?(?![\\w])");

  private static final Pattern FILE_NAME =
      Pattern.compile("(\\d{4}-\\d{2}-\\d{2})-[a-z0-9-]+\\.md");

  /** Inline code with an argument: a command, not only a name. */
  private static final Pattern INLINE_COMMAND = Pattern.compile("`[^`]+ [^`]+`");

  private static final Pattern COMMIT = Pattern.compile("commit not recorded|\\b[0-9a-f]{7,40}\\b");

  /** One figure of the README: its number and unit ("/s" for any rate), as written. */
  record Figure(String number, String unit, String asWritten) {}

  /** One row of the table: its line in the README, its "measured" cell, its links. */
  record Row(int line, String measured, List<String> links) {}

  @Test
  void everyFigureTheReadmeMeasuresIsInTheResultsItLinks() {
    List<Row> rows = measuredRows();
    assertThat(rows).as("rows of the README's What is measured table").hasSizeGreaterThan(5);
    List<String> wrong = new ArrayList<>();
    for (Row row : rows) {
      String where = "README.md:" + row.line() + " (" + row.measured() + ")";
      if (row.links().isEmpty()) {
        wrong.add(where + ": links no page its figures come from");
        continue;
      }
      List<String> pages = new ArrayList<>();
      for (String link : row.links()) {
        int hash = link.indexOf('#');
        String path = hash < 0 ? link : link.substring(0, hash);
        Path target = ROOT.resolve(path).normalize();
        if (target.startsWith(SUPERSEDED)) {
          wrong.add(where + ": links superseded results " + link);
        } else if (target.equals(HOW_TO)) {
          wrong.add(where + ": links the how-to page, which holds no results: " + link);
        } else if (!target.startsWith(ROOT.resolve("docs")) || !path.endsWith(".md")) {
          wrong.add(where + ": links no page of docs/: " + link);
        } else if (!Files.isRegularFile(target)) {
          wrong.add(where + ": links a missing file " + link);
        } else {
          pages.add(Docs.read(target));
        }
      }
      if (pages.isEmpty()) {
        continue;
      }
      for (Figure f : figures(row.measured())) {
        if (pages.stream().noneMatch(p -> contains(p, f))) {
          wrong.add(where + ": " + f.asWritten() + " is not in " + row.links());
        }
      }
    }
    assertThat(wrong).as("README figures not backed by the page they link").isEmpty();
  }

  @Test
  void everyResultsFileStatesItsDateCommitMachineAndCommand() {
    List<Path> files = resultsFiles();
    assertThat(files.stream().filter(f -> !f.startsWith(SUPERSEDED)))
        .as("current results files")
        .isNotEmpty();
    List<String> wrong = new ArrayList<>();
    String howTo = Docs.read(HOW_TO);
    for (Path f : files) {
      String name = ROOT.relativize(f).toString();
      Matcher file = FILE_NAME.matcher(f.getFileName().toString());
      if (!file.matches()) {
        wrong.add(name + ": not named YYYY-MM-DD-<short-name>.md");
        continue;
      }
      List<String> lines = Docs.read(f).lines().toList();
      if (lines.isEmpty() || !lines.get(0).startsWith("# ")) {
        wrong.add(name + ": no title on its first line");
      }
      String date = field(lines, "Date");
      if (date == null || !date.startsWith(file.group(1))) {
        wrong.add(name + ": its Date field is not " + file.group(1) + " (" + date + ")");
      }
      String commit = field(lines, "Commit");
      if (commit == null || !COMMIT.matcher(commit).find()) {
        wrong.add(name + ": no Commit field naming a commit or saying 'commit not recorded'");
      }
      String machine = field(lines, "Machine");
      if (machine == null || machine.isBlank()) {
        wrong.add(name + ": no Machine field");
      }
      if (!hasCommand(lines)) {
        wrong.add(name + ": no Command field with the command, inline or in a code block after it");
      }
      if (f.startsWith(SUPERSEDED)) {
        String by = field(lines, "Superseded by");
        if (by == null || !by.contains("](../")) {
          wrong.add(name + ": no 'Superseded by' field linking the results that replaced it");
        }
      } else if (!howTo.contains("(results/" + f.getFileName() + ")")) {
        wrong.add(name + ": not linked from docs/benchmarks/README.md");
      }
    }
    assertThat(wrong).as("results files without their header").isEmpty();
  }

  @Test
  void figuresAreFoundWithTheirUnits() {
    assertThat(figures("12,327/s, 96% of raw SQL's 12,863/s"))
        .extracting(Figure::number, Figure::unit)
        .containsExactly(tuple("12,327", "/s"), tuple("96", "%"), tuple("12,863", "/s"));
    assertThat(figures("close lag p99 378-604 ms, 101% (651 vs 645 placements/s)"))
        .extracting(Figure::asWritten)
        .containsExactly("378-604 ms", "101%", "651", "645 placements/s");
    assertThat(contains("S2: 12,327 closes/s = 96% of it", figures("12,327/s").get(0))).isTrue();
    assertThat(contains("| none | 173.7 (160.5-986.0) |", figures("173.7 ms").get(0))).isTrue();
    assertThat(contains("missed, 168 ms", figures("68 ms").get(0))).isFalse();
    assertThat(contains("82 orders in 67 s", figures("67 ms").get(0))).isFalse();
    assertThat(contains("12,3270 closes/s", figures("12,327/s").get(0))).isFalse();
    assertThat(contains("p99 4.71 s", figures("4.7 s").get(0))).isFalse();
  }

  /** The figures of a cell, in order. */
  static List<Figure> figures(String cell) {
    List<Figure> out = new ArrayList<>();
    Matcher m = FIGURE.matcher(cell);
    while (m.find()) {
      String unit = m.group(2);
      if (unit != null && unit.endsWith("/s")) {
        unit = "/s";
      }
      out.add(new Figure(m.group(1), unit, m.group().strip()));
    }
    return out;
  }

  /**
   * Whether a page quotes a figure: the same number with the same unit (a rate with or without the
   * word for what it counts), or, in a table whose heading or caption carries the unit, the number
   * opening a cell.
   */
  static boolean contains(String page, Figure f) {
    String number = "(?<![\\d.,])" + Pattern.quote(f.number()) + "(?!\\d|[.,]\\d)";
    String unit;
    if (f.unit() == null) {
      unit = "";
    } else if (f.unit().equals("/s")) {
      unit = "(?:\\s?[a-z]+)?/s(?![\\w/])";
    } else {
      unit = "\\s?" + Pattern.quote(f.unit()) + "(?![\\w/])";
    }
    if (Pattern.compile(number + unit).matcher(page).find()) {
      return true;
    }
    return Pattern.compile("(?m)^\\|.*\\|\\s*" + number + "(?=\\s*[|(])").matcher(page).find();
  }

  /** The rows of the README's "What is measured" table. */
  static List<Row> measuredRows() {
    Path readme = ROOT.resolve("README.md");
    Map<Integer, String> prose = Docs.prose(Docs.read(readme));
    List<Docs.Link> links = Docs.links(readme);
    List<Row> rows = new ArrayList<>();
    boolean section = false;
    int measured = -1;
    for (Map.Entry<Integer, String> e : prose.entrySet()) {
      String l = e.getValue();
      if (l.startsWith("## ")) {
        section = l.equals("## What is measured");
        continue;
      }
      if (!section || !l.startsWith("|")) {
        continue;
      }
      List<String> cells = cells(l);
      if (measured < 0) {
        measured = cells.indexOf("measured");
        assertThat(measured).as("the table's measured column").isNotNegative();
        continue;
      }
      if (cells.stream().allMatch(c -> c.matches(":?-+:?"))) {
        continue;
      }
      int line = e.getKey();
      rows.add(
          new Row(
              line,
              cells.get(measured),
              links.stream()
                  .filter(k -> k.line() == line && !k.target().matches("^[a-z]+:.*"))
                  .map(Docs.Link::target)
                  .toList()));
    }
    return rows;
  }

  private static List<String> cells(String row) {
    String inner = row.strip();
    inner = inner.substring(1, inner.endsWith("|") ? inner.length() - 1 : inner.length());
    List<String> out = new ArrayList<>();
    for (String c : inner.split("\\|", -1)) {
      out.add(c.strip());
    }
    return out;
  }

  private static List<Path> resultsFiles() {
    try (Stream<Path> s = Files.walk(RESULTS)) {
      return s.filter(p -> p.toString().endsWith(".md")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A header field, "- **Name**: value" with its continuation lines, or null. */
  private static String field(List<String> lines, String name) {
    String start = "- **" + name + "**";
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith(start)) {
        StringBuilder v = new StringBuilder(lines.get(i).substring(start.length()));
        for (int j = i + 1; j < lines.size() && lines.get(j).startsWith("  "); j++) {
          v.append(' ').append(lines.get(j).strip());
        }
        String value = v.toString().strip();
        return value.startsWith(":") ? value.substring(1).strip() : value;
      }
    }
    return null;
  }

  /**
   * Whether the header gives the command: inline code with its arguments, or a code block after the
   * field.
   */
  private static boolean hasCommand(List<String> lines) {
    for (int i = 0; i < lines.size(); i++) {
      String l = lines.get(i);
      if (l.startsWith("- **Command**")) {
        if (INLINE_COMMAND.matcher(field(lines, "Command")).find()) {
          return true;
        }
        for (int j = i + 1; j < lines.size(); j++) {
          String next = lines.get(j).strip();
          if (next.startsWith("```")) {
            return true;
          }
          if (!next.isEmpty() && !lines.get(j).startsWith("  ")) {
            return false;
          }
        }
      }
    }
    return false;
  }
}
