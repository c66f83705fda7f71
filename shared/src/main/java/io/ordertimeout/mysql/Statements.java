package io.ordertimeout.mysql;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * Keeps every statement's text under RDS Proxy's pinning threshold: the proxy pins a client session
 * to one database connection for the rest of its life when a statement's text is larger than 16 KB
 * (AWS, "Avoiding pinning an RDS Proxy"). With client-side prepared statements (the pool's URL sets
 * useServerPrepStmts=false) the text is the SQL with every parameter written in as a literal, and
 * with rewriteBatchedStatements a batch becomes one multi-row INSERT or one multi-statement text;
 * so a 500-id IN list of 32-character order ids (~17.5 KB) or a close's RELEASE rows would pass it.
 * IN lists are cut by {@link #inLists}, batches sent by {@link Batch} and many rows of one INSERT
 * by {@link Rows}, all by the bytes the driver will send, not by a count.
 */
public final class Statements {
  /** RDS Proxy pins on a statement text above 16 KB. */
  public static final int MAX_BYTES = 16_384;

  /** Room for what is not counted exactly (spaces the driver adds, a literal's type prefix). */
  static final int SLACK = 256;

  private Statements() {}

  /**
   * {@code values} cut into consecutive lists, each of which written into {@code sql} as an IN list
   * of string literals keeps the statement under {@link #MAX_BYTES}.
   */
  public static List<List<String>> inLists(String sql, List<String> values) {
    return parts(sql, values, value -> literalBytes(value) + 1); // the comma
  }

  /**
   * {@code values} cut into consecutive parts, in their order, such that {@code sql}'s fixed text
   * plus the {@code bytes} of each value of a part stays under {@link #MAX_BYTES}: for statements
   * whose text grows by a known amount per value (an IN list, a CASE with a WHEN per value).
   */
  public static <T> List<List<T>> parts(String sql, List<T> values, ToIntFunction<T> bytes) {
    int budget = MAX_BYTES - SLACK - utf8(sql);
    List<List<T>> chunks = new ArrayList<>();
    List<T> chunk = new ArrayList<>();
    int used = 0;
    for (T value : values) {
      int cost = bytes.applyAsInt(value);
      if (!chunk.isEmpty() && used + cost > budget) {
        chunks.add(chunk);
        chunk = new ArrayList<>();
        used = 0;
      }
      chunk.add(value);
      used += cost;
    }
    if (!chunk.isEmpty()) {
      chunks.add(chunk);
    }
    return chunks;
  }

  /**
   * A JDBC batch sent in parts whose rewritten text stays under {@link #MAX_BYTES}: an INSERT's
   * rows after the first cost their VALUES tuple, any other statement's rows cost the whole
   * statement (the driver joins them with ';').
   */
  public static final class Batch {
    private final PreparedStatement ps;
    private final int budget;
    private final int rowBytes;
    private final List<int[]> counts = new ArrayList<>();
    private int used;
    private int rows;

    public Batch(PreparedStatement ps, String sql) {
      this.ps = ps;
      this.budget = MAX_BYTES - SLACK - utf8(sql);
      int values = sql.toUpperCase(java.util.Locale.ROOT).indexOf(" VALUES ");
      this.rowBytes =
          sql.trim().toUpperCase(java.util.Locale.ROOT).startsWith("INSERT") && values >= 0
              ? utf8(sql.substring(values + 8)) + 1
              : utf8(sql) + 1;
    }

    /** Binds {@code values} as parameters 1..n and adds the row, sending first if it must. */
    public void row(Object... values) throws SQLException {
      int cost = rowBytes;
      for (Object v : values) {
        cost += valueBytes(v);
      }
      if (rows > 0 && used + cost > budget) {
        counts.add(ps.executeBatch());
        used = 0;
        rows = 0;
      }
      for (int i = 0; i < values.length; i++) {
        ps.setObject(i + 1, values[i]);
      }
      ps.addBatch();
      used += cost;
      rows++;
    }

    /** Sends what is left; the update counts of every row, in the order they were added. */
    public int[] execute() throws SQLException {
      if (rows > 0) {
        counts.add(ps.executeBatch());
        rows = 0;
      }
      return counts.stream().flatMapToInt(java.util.Arrays::stream).toArray();
    }
  }

  /**
   * Many rows of one INSERT sent as {@code INSERT ... VALUES (...),(...)} statements of their own,
   * each under {@link #MAX_BYTES}, every value bound once. The text on the wire is the one a JDBC
   * batch of the rows becomes (the driver's rewriteBatchedStatements), but the batch costs the
   * driver a copy of every row's bind values at {@code addBatch} and that rewrite at {@code
   * executeBatch}, two to three times the allocation per row for the same text and the same
   * database CPU (docs/benchmarks/sweep-profile.md, where a close's allocation goes). An {@code
   * INSERT ... SELECT} that let the server build the rows allocated less still but cost the
   * database more.
   */
  public static final class Rows {
    private final Connection connection;
    private final String head;
    private final String row;
    private final int budget;
    private final int rowBytes;
    private final List<Object[]> pending = new ArrayList<>();
    private int used;
    private int inserted;

    /**
     * @param head the statement up to its rows, e.g. {@code INSERT INTO t (a, b, c) VALUES}
     * @param row one row, e.g. {@code (?,?,'RELEASE')}: its placeholders take {@link #add}'s values
     */
    public Rows(Connection connection, String head, String row) {
      this.connection = connection;
      this.head = head + " ";
      this.row = row;
      this.budget = MAX_BYTES - SLACK - utf8(this.head);
      this.rowBytes = utf8(row) + 1; // the comma
    }

    /**
     * Adds a row of {@code values}, sending the rows before it first if they would pass the limit.
     */
    public void add(Object... values) throws SQLException {
      int cost = rowBytes;
      for (Object v : values) {
        cost += valueBytes(v);
      }
      if (!pending.isEmpty() && used + cost > budget) {
        send();
      }
      pending.add(values);
      used += cost;
    }

    /** Sends what is left; the rows every statement inserted. */
    public int execute() throws SQLException {
      send();
      return inserted;
    }

    private void send() throws SQLException {
      if (pending.isEmpty()) {
        return;
      }
      StringBuilder sql = new StringBuilder(head.length() + pending.size() * (row.length() + 1));
      sql.append(head);
      for (int i = 0; i < pending.size(); i++) {
        sql.append(i == 0 ? "" : ",").append(row);
      }
      try (PreparedStatement ps = connection.prepareStatement(sql.toString())) {
        int k = 1;
        for (Object[] values : pending) {
          for (Object v : values) {
            ps.setObject(k++, v);
          }
        }
        inserted += ps.executeUpdate();
      }
      pending.clear();
      used = 0;
    }
  }

  /**
   * The longest prefix of {@code text} that, written as a quoted SQL literal, takes at most {@code
   * maxBytes}: for bound values with no natural bound (a compensation flag's evidence, a dead
   * letter's payload and errors), so that their statement stays under {@link #MAX_BYTES}.
   */
  public static String cutToBytes(String text, int maxBytes) {
    if (literalBytes(text) <= maxBytes) {
      return text;
    }
    int used = 2; // the quotes
    int end = 0;
    while (end < text.length()) {
      int cp = text.codePointAt(end);
      int cost = utf8Bytes(cp) + (escaped(cp) ? 1 : 0);
      if (used + cost > maxBytes) {
        break;
      }
      used += cost;
      end += Character.charCount(cp);
    }
    return text.substring(0, end);
  }

  private static int utf8Bytes(int cp) {
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }

  private static boolean escaped(int cp) {
    return cp == 0
        || cp == '\n'
        || cp == '\r'
        || cp == '\\'
        || cp == '\''
        || cp == '"'
        || cp == 0x1a;
  }

  /**
   * A bound value written into the text: a string as a quoted literal, anything else as its digits
   * (or NULL) with room for a type prefix.
   */
  static int valueBytes(Object value) {
    return value instanceof String s ? literalBytes(s) : String.valueOf(value).length() + 2;
  }

  /** A string written as a quoted SQL literal: its UTF-8 bytes, one per escape, two quotes. */
  public static int literalBytes(String value) {
    int escapes = 0;
    for (int i = 0; i < value.length(); i++) {
      switch (value.charAt(i)) {
        case '\0', '\n', '\r', '\\', '\'', '"', '\u001a' -> escapes++;
        default -> {
          // written as is
        }
      }
    }
    return utf8(value) + escapes + 2;
  }

  static int utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }
}
