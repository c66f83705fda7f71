package io.ordertimeout.local;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The project's documentation as the tests read it: README.md, CHANGELOG.md, CONTRIBUTING.md,
 * SECURITY.md and every Markdown file under docs/, their headings' anchors (GitHub's rule: lower
 * case, punctuation but '-' and '_' dropped, spaces to '-', a repeated heading numbered) and their
 * links, code blocks left out.
 */
final class Docs {
  private static final Pattern LINK = Pattern.compile("\\[([^\\]]*)\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("^#{1,6} (.+)$");

  /** One link: the file it is in, its line, its target as written. */
  record Link(Path file, int line, String target) {}

  private Docs() {}

  /** The documentation files, repository-relative paths, in a stable order. */
  static List<Path> files(Path root) {
    List<Path> out = new ArrayList<>();
    for (String top : List.of("README.md", "CHANGELOG.md", "CONTRIBUTING.md", "SECURITY.md")) {
      if (Files.exists(root.resolve(top))) {
        out.add(root.resolve(top));
      }
    }
    try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(out::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /** Every documentation file's text, joined: what a reader can find anywhere in the docs. */
  static String all(Path root) {
    StringBuilder all = new StringBuilder();
    for (Path f : files(root)) {
      all.append(read(f)).append('\n');
    }
    return all.toString();
  }

  static String read(Path f) {
    try {
      return Files.readString(f);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The lines outside fenced code blocks, by line number (1-based). */
  static Map<Integer, String> prose(String text) {
    Map<Integer, String> out = new LinkedHashMap<>();
    boolean fence = false;
    List<String> lines = text.lines().toList();
    for (int i = 0; i < lines.size(); i++) {
      String l = lines.get(i);
      if (l.startsWith("```")) {
        fence = !fence;
        continue;
      }
      if (!fence) {
        out.put(i + 1, l);
      }
    }
    return out;
  }

  /** The anchors of a file's headings, as GitHub makes them. */
  static List<String> anchors(String text) {
    List<String> out = new ArrayList<>();
    Map<String, Integer> seen = new LinkedHashMap<>();
    for (String l : prose(text).values()) {
      Matcher m = HEADING.matcher(l);
      if (m.matches()) {
        String slug = slug(m.group(1));
        int n = seen.merge(slug, 1, Integer::sum) - 1;
        out.add(n == 0 ? slug : slug + "-" + n);
      }
    }
    return out;
  }

  static String slug(String heading) {
    return heading
        .strip()
        .toLowerCase(Locale.ROOT)
        .replaceAll("[^\\p{L}\\p{N}_\\- ]", "")
        .replace(' ', '-');
  }

  /** Every link of a file outside code blocks and inline code. */
  static List<Link> links(Path file) {
    List<Link> out = new ArrayList<>();
    prose(read(file))
        .forEach(
            (line, text) -> {
              Matcher m = LINK.matcher(text.replaceAll("`[^`]*`", "``"));
              while (m.find()) {
                out.add(new Link(file, line, m.group(2)));
              }
            });
    return out;
  }
}
