package io.ordertimeout.reliability;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * MariaDB's {@code NOW()} stepped by an offset for the connections of one {@link FaultProxy}: each
 * statement the client sends as a COM_QUERY (the driver's text protocol: useServerPrepStmts=false,
 * Database's settings) goes to the server as {@code SET STATEMENT timestamp =
 * UNIX_TIMESTAMP(NOW(6)) + offset FOR <statement>}, MariaDB's per-statement variable, which sets
 * what NOW() answers in that statement only. The server's clock itself cannot be stepped by a test
 * (it is the host's, shared by every other test), and a session's {@code SET TIMESTAMP} would
 * freeze NOW() instead of moving it on.
 *
 * <p>Only statements that may read NOW() are rewritten (SELECT, INSERT, UPDATE, DELETE, REPLACE,
 * WITH); a batch sent as one multi-statement text gets the step on its first statement only, the
 * close path's statements that read NOW() ({@code expire_at <= NOW(3)}, the placement's {@code
 * SELECT NOW(3)}) are single statements.
 */
final class DbClockStep implements FaultProxy.PacketRewriter {
  private static final byte COM_QUERY = 0x03;
  private static final Pattern READS_NOW =
      Pattern.compile(
          "^\\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|WITH)\\b", Pattern.CASE_INSENSITIVE);

  private volatile long offsetMillis;
  private final AtomicLong rewritten = new AtomicLong();

  /** NOW() runs {@code millis} ahead (negative: behind) from the next statement on; 0 heals. */
  void step(long millis) {
    offsetMillis = millis;
  }

  /** Statements sent with the stepped clock so far. */
  long rewritten() {
    return rewritten.get();
  }

  @Override
  public byte[] rewrite(int sequenceId, byte[] payload) {
    long offset = offsetMillis;
    // a command starts a packet sequence at 0; the handshake and auth packets never do
    if (offset == 0 || sequenceId != 0 || payload.length < 2 || payload[0] != COM_QUERY) {
      return payload;
    }
    String head = new String(payload, 1, Math.min(payload.length - 1, 32), StandardCharsets.UTF_8);
    if (!READS_NOW.matcher(head).find()) {
      return payload;
    }
    byte[] prefix =
        String.format(
                Locale.ROOT,
                "SET STATEMENT timestamp = UNIX_TIMESTAMP(NOW(6)) + %.3f FOR ",
                offset / 1000.0)
            .getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[payload.length + prefix.length];
    out[0] = COM_QUERY;
    System.arraycopy(prefix, 0, out, 1, prefix.length);
    System.arraycopy(payload, 1, out, 1 + prefix.length, payload.length - 1);
    if (out.length >= 0xFFFFFF) {
      return payload; // would not fit one packet; no statement of this system comes close
    }
    rewritten.incrementAndGet();
    return out;
  }
}
