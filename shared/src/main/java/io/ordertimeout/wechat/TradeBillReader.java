package io.ordertimeout.wechat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;

/**
 * Reads a trade bill's detail lines one at a time ({@link #next()}) and, after the last, checks
 * them against the summary: the summary's 总交易单数 must equal the number of detail lines read, so a
 * bill cut short is an error, not a smaller day.
 */
public final class TradeBillReader implements AutoCloseable {
  private final BufferedReader reader;
  private long lines;
  private boolean done;

  TradeBillReader(BufferedReader reader) {
    this.reader = reader;
    readHeader();
  }

  static TradeBillReader empty() {
    return new TradeBillReader(null);
  }

  private void readHeader() {
    if (reader == null) {
      done = true;
      return;
    }
    String header = readLine();
    if (header == null) {
      throw new IllegalArgumentException("the trade bill is empty: no header");
    }
    String first = header.startsWith("\uFEFF") ? header.substring(1) : header;
    if (!first.startsWith(TradeBillFormat.COLUMNS.get(0) + ",")) {
      throw new IllegalArgumentException(
          "the trade bill's header is not the ALL bill's: " + TradeBillFormat.abbreviate(first));
    }
  }

  /**
   * The next detail line; null after the last one, once the summary has been checked.
   *
   * @throws IllegalArgumentException a malformed row, or a summary that disagrees with the rows
   */
  public BillLine next() {
    if (done) {
      return null;
    }
    String row = readLine();
    if (row == null) {
      throw new IllegalArgumentException("the trade bill ends without its summary");
    }
    if (row.startsWith(TradeBillFormat.SUMMARY_COLUMNS.get(0))) {
      checkSummary(readLine());
      done = true;
      return null;
    }
    lines++;
    return TradeBillFormat.line(row);
  }

  /** Detail lines read so far. */
  public long lines() {
    return lines;
  }

  private void checkSummary(String row) {
    if (row == null) {
      throw new IllegalArgumentException("the trade bill's summary has no values");
    }
    long count = Long.parseLong(TradeBillFormat.fields(row)[0]);
    if (count != lines) {
      throw new IllegalArgumentException(
          "the trade bill's summary counts " + count + " lines, the bill has " + lines);
    }
  }

  private String readLine() {
    try {
      return reader.readLine();
    } catch (IOException e) {
      throw new UncheckedIOException("read the trade bill", e);
    }
  }

  @Override
  public void close() {
    if (reader != null) {
      try {
        reader.close();
      } catch (IOException e) {
        throw new UncheckedIOException("close the trade bill", e);
      }
    }
  }

  /** A reader over bill text in memory (tests, the simulator's own checks). */
  public static TradeBillReader of(String text) {
    return new TradeBillReader(new BufferedReader(new StringReader(text)));
  }
}
