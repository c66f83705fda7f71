package io.ordertimeout.ops;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Rows under a header, each column as wide as its widest cell and two spaces apart; the last column
 * is not padded, so no line ends in blanks. A missing value prints as "-".
 */
final class Table {
  private final List<String> header;
  private final List<List<String>> rows = new ArrayList<>();

  private final boolean headed;

  /** Columns under these headings. */
  Table(String... header) {
    this(true, List.of(header));
  }

  private Table(boolean headed, List<String> header) {
    this.headed = headed;
    this.header = header;
  }

  /** {@code columns} aligned columns without a heading line (label, value lists). */
  static Table unheaded(int columns) {
    return new Table(false, java.util.Collections.nCopies(columns, ""));
  }

  Table row(Object... cells) {
    if (cells.length != header.size()) {
      throw new IllegalArgumentException(
          "a row of " + cells.length + " cells under " + header.size() + " columns");
    }
    rows.add(Arrays.stream(cells).map(c -> c == null ? "-" : c.toString()).toList());
    return this;
  }

  boolean isEmpty() {
    return rows.isEmpty();
  }

  /** The header and every row, one line each, with the trailing newline. */
  String render() {
    int[] width = new int[header.size()];
    for (List<String> line : lines()) {
      for (int i = 0; i < width.length; i++) {
        width[i] = Math.max(width[i], line.get(i).length());
      }
    }
    StringBuilder out = new StringBuilder();
    for (List<String> line : lines()) {
      StringBuilder l = new StringBuilder();
      for (int i = 0; i < width.length; i++) {
        l.append(i + 1 < width.length ? pad(line.get(i), width[i]) + "  " : line.get(i));
      }
      out.append(l.toString().stripTrailing()).append('\n');
    }
    return out.toString();
  }

  private List<List<String>> lines() {
    List<List<String>> all = new ArrayList<>();
    if (headed) {
      all.add(header);
    }
    all.addAll(rows);
    return all;
  }

  private static String pad(String s, int width) {
    return s + " ".repeat(width - s.length());
  }
}
