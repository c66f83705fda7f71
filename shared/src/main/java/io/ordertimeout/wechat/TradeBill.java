package io.ordertimeout.wechat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.Objects;

/**
 * One day's trade bill of a merchant, downloaded and its digest verified before anyone reads it:
 * the gateway streams WeChat's download through the SDK's digest into a temporary file, checks the
 * SHA1 against the one the tradebill answer gave, and only then hands this out. Reading is streamed
 * again from the file ({@link #open()}), so a bill of 100,000 lines is never held in memory, and
 * nothing is acted on from a bill whose digest did not match. {@link #close()} deletes the file.
 *
 * <p>A day without any trade (WeChat's NO_STATEMENT_EXIST) is an empty bill.
 */
public final class TradeBill implements AutoCloseable {
  private final String mchid;
  private final LocalDate day;
  private final Path file;

  /**
   * @param file the verified bill text (UTF-8); null for a day without trades
   */
  public TradeBill(String mchid, LocalDate day, Path file) {
    this.mchid = Objects.requireNonNull(mchid, "mchid");
    this.day = Objects.requireNonNull(day, "day");
    this.file = file;
  }

  /** The merchant whose bill this is. */
  public String mchid() {
    return mchid;
  }

  /** The bill's day, in Asia/Shanghai. */
  public LocalDate day() {
    return day;
  }

  /** Opens a reader over the detail lines; each call reads the file again from its start. */
  public TradeBillReader open() {
    if (file == null) {
      return TradeBillReader.empty();
    }
    try {
      BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8);
      return new TradeBillReader(reader);
    } catch (IOException e) {
      throw new UncheckedIOException("open the trade bill of " + mchid + " for " + day, e);
    }
  }

  @Override
  public void close() {
    if (file != null) {
      try {
        Files.deleteIfExists(file);
      } catch (IOException e) {
        throw new UncheckedIOException("delete the trade bill file " + file, e);
      }
    }
  }
}
