package io.ordertimeout.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;

/**
 * A class histogram of this JVM's live heap, as {@code jcmd <pid> GC.class_histogram} prints it
 * (the DiagnosticCommand MBean's {@code gcClassHistogram}, which runs a full GC first, so only what
 * is reachable counts), and the growth between two of them: what the soak uses to name what grows.
 */
final class HeapHistogram {
  /** One class's live instances and bytes. */
  record Row(String className, long instances, long bytes) {}

  /** One class's growth between two histograms (negative: it shrank). */
  record Growth(String className, long instances, long bytes) {
    @Override
    public String toString() {
      return String.format("%+,10d B %+,8d inst  %s", bytes, instances, className);
    }
  }

  // "   1:         12345        1234567  [B (java.base@17.0.15)"
  private static final Pattern ROW =
      Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)(?:\\s+\\(.*\\))?\\s*$");

  private final String text;
  private final Map<String, Row> rows;

  private HeapHistogram(String text, Map<String, Row> rows) {
    this.text = text;
    this.rows = rows;
  }

  /** The live heap now (a full GC, then a walk of the heap: ~0.1 s at the soak's ~30 MB). */
  static HeapHistogram take() {
    try {
      String text =
          (String)
              ManagementFactory.getPlatformMBeanServer()
                  .invoke(
                      new ObjectName("com.sun.management:type=DiagnosticCommand"),
                      "gcClassHistogram",
                      new Object[] {new String[0]},
                      new String[] {String[].class.getName()});
      return parse(text);
    } catch (javax.management.JMException e) {
      throw new IllegalStateException("gcClassHistogram failed", e);
    }
  }

  static HeapHistogram parse(String text) {
    Map<String, Row> rows = new HashMap<>();
    for (String line : text.split("\n")) {
      Matcher m = ROW.matcher(line);
      if (m.matches()) {
        // two loaders can each hold a class of one name: their counts add up
        rows.merge(
            m.group(3),
            new Row(m.group(3), Long.parseLong(m.group(1)), Long.parseLong(m.group(2))),
            (a, b) -> new Row(a.className(), a.instances() + b.instances(), a.bytes() + b.bytes()));
      }
    }
    if (rows.isEmpty()) {
      throw new IllegalStateException("no class rows in the histogram: " + text.lines().limit(5));
    }
    return new HeapHistogram(text, rows);
  }

  /**
   * Writes this histogram to {@code file}, for {@link #read} to bring back: a histogram kept in the
   * heap (~4,000 rows, ~1 MB) would itself read as growth in every later one.
   */
  void writeTo(Path file) {
    try {
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the histogram to " + file, e);
    }
  }

  static HeapHistogram read(Path file) {
    try {
      return parse(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the histogram from " + file, e);
    }
  }

  long totalBytes() {
    return rows.values().stream().mapToLong(Row::bytes).sum();
  }

  Row row(String className) {
    return rows.getOrDefault(className, new Row(className, 0, 0));
  }

  /** The {@code top} classes that grew most in bytes from {@code before} to this histogram. */
  List<Growth> growthSince(HeapHistogram before, int top) {
    Set<String> names = new HashSet<>(rows.keySet());
    names.addAll(before.rows.keySet());
    List<Growth> out = new ArrayList<>();
    for (String name : names) {
      Row now = row(name);
      Row then = before.row(name);
      out.add(new Growth(name, now.instances() - then.instances(), now.bytes() - then.bytes()));
    }
    out.sort(Comparator.comparingLong(Growth::bytes).reversed());
    return out.subList(0, Math.min(top, out.size()));
  }
}
