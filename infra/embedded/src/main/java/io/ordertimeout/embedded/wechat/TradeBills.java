package io.ordertimeout.embedded.wechat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.GZIPOutputStream;

/**
 * The simulator's trade bills: {@code GET
 * /v3/bill/tradebill?bill_date=&bill_type=ALL[&tar_type=GZIP]} answers {@code hash_type} SHA1,
 * {@code hash_value} and a {@code download_url} on this simulator, and {@code GET
 * /v3/billdownload/file?token=} serves the bill (gzipped when GZIP was asked). Both check the
 * merchant's signature like every API; the tradebill answer is signed, the download is not (WeChat
 * does not sign it; the digest is the check).
 *
 * <p>The bill of a day is built from the trade book when it is asked for: every trade paid that
 * Beijing day (SUCCESS, also when refunded since; notified or not) and every refund created that
 * day. Unlike WeChat, which publishes a day's bill the next morning, the simulator answers for the
 * current day too, as the book stands (tests pay and reconcile within seconds). A day with no line
 * answers 400 NO_STATEMENT_EXIST, a day in the future 400 PARAM_ERROR. A test may {@link #plant} a
 * bill file for a day instead (a large bill for the benchmark, a bill with foreign lines).
 *
 * <p>With {@code sub_mchid=X} (a service provider asking for one sub-merchant's bill) the bill is
 * built from sub-merchant X's trade book (see {@link SubMerchants}): 商户号 is the provider's mchid,
 * 特约商户号 is X; same digest, gzip and NO_STATEMENT_EXIST as above. A sub_mchid not registered with
 * this provider answers 400 PARAM_ERROR, as WeChat answers a sub_mchid that is not bound to the
 * provider: it is a wrong request, not a quiet day (NO_STATEMENT_EXIST would let a misconfigured
 * tenant reconcile as an empty day). A bill may be planted for a sub-merchant too.
 *
 * <p>The SHA1 is over the bill text as served before compression, as the SDK's DigestBillEntity
 * computes it after unzipping.
 */
public final class TradeBills implements HttpHandler {
  static final String TRADEBILL_PATH = "/v3/bill/tradebill";
  static final String DOWNLOAD_PATH = "/v3/billdownload/file";

  /** Downloads prepared and not yet fetched; WeChat's download_url is valid for 30 s. */
  private static final int MAX_PREPARED = 16;

  private static final ObjectMapper JSON = new ObjectMapper();

  private final WeChatPaySimulator simulator;
  private final TradeBook book;
  private final SubMerchants subMerchants;
  private final ApiHandler api;
  private final Clock clock;

  /** Planted bill files by (sub_mchid, "0" for the merchant's own, day). */
  private final Map<Map.Entry<String, LocalDate>, Path> planted = new ConcurrentHashMap<>();

  /**
   * Each day's bill as first built from the book, by sub_mchid ("0" for the merchant's own): WeChat
   * publishes a day's bill once.
   */
  private final Map<Map.Entry<String, LocalDate>, byte[][]> published = new ConcurrentHashMap<>();

  private final Map<String, Prepared> prepared = new LinkedHashMap<>();
  private final AtomicInteger downloads = new AtomicInteger();
  private final AtomicInteger tokens = new AtomicInteger();
  private final AtomicInteger corrupt = new AtomicInteger();

  /** A bill ready to download: its text (gzipped or not) and the digest of the text. */
  private record Prepared(byte[] body, boolean gzip) {}

  TradeBills(
      WeChatPaySimulator simulator,
      TradeBook book,
      SubMerchants subMerchants,
      ApiHandler api,
      Clock clock) {
    this.simulator = simulator;
    this.book = book;
    this.subMerchants = subMerchants;
    this.api = api;
    this.clock = clock;
  }

  /**
   * Serves {@code file} (bill text in WeChat's format, UTF-8) as the bill of {@code day} instead of
   * the trade book's, until {@link #unplant}.
   */
  public void plant(LocalDate day, Path file) {
    planted.put(Map.entry("0", day), file);
  }

  /** As {@link #plant(LocalDate, Path)}, the bill of sub-merchant {@code subMchid}. */
  public void plant(String subMchid, LocalDate day, Path file) {
    planted.put(Map.entry(subMchid, day), file);
  }

  public void unplant(LocalDate day) {
    planted.keySet().removeIf(key -> key.getValue().equals(day));
  }

  /**
   * Forgets the bill of {@code day} built from the trade book: the next tradebill call builds it
   * again from the trades as they are then.
   */
  public void republish(LocalDate day) {
    published.keySet().removeIf(key -> key.getValue().equals(day));
  }

  /**
   * The next {@code count} downloads serve the bill with one byte changed after its digest was
   * given (a proxy or a disk that altered it): the SDK's digest check must fail.
   */
  public void corruptDownloads(int count) {
    corrupt.set(count);
  }

  /** Bills downloaded so far. */
  public int downloads() {
    return downloads.get();
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String path = exchange.getRequestURI().getPath();
      if (!"GET".equals(exchange.getRequestMethod())) {
        api.send(exchange, ApiAnswer.error(404, "NOT_FOUND", "no such API: " + path));
        return;
      }
      String authError = api.authenticate(exchange, "");
      if (authError != null) {
        api.send(exchange, ApiAnswer.error(401, "SIGN_ERROR", authError));
      } else if (path.equals(TRADEBILL_PATH)) {
        api.send(exchange, tradeBill(params(exchange)));
      } else if (path.equals(DOWNLOAD_PATH)) {
        download(exchange, params(exchange).get("token"));
      } else {
        api.send(exchange, ApiAnswer.error(404, "NOT_FOUND", "no such API: " + path));
      }
    } catch (RuntimeException e) {
      api.send(exchange, ApiAnswer.error(500, "SYSTEM_ERROR", "simulator failure: " + e));
    }
  }

  private ApiAnswer tradeBill(Map<String, String> params) {
    LocalDate day;
    try {
      day = LocalDate.parse(params.getOrDefault("bill_date", ""));
    } catch (DateTimeParseException e) {
      return ApiAnswer.error(400, "PARAM_ERROR", "bill_date must be yyyy-MM-dd");
    }
    String type = params.getOrDefault("bill_type", "ALL");
    if (!"ALL".equals(type)) {
      return ApiAnswer.error(400, "PARAM_ERROR", "the simulator serves bill_type ALL only");
    }
    if (day.isAfter(LocalDate.ofInstant(clock.instant(), TradeBook.BEIJING))) {
      return ApiAnswer.error(400, "PARAM_ERROR", "bill_date is in the future: " + day);
    }
    boolean gzip = "GZIP".equals(params.get("tar_type"));
    String subMchid = params.get("sub_mchid");
    byte[][] bill;
    if (subMchid != null) {
      TradeBook subBook = subMerchants.book(subMchid).orElse(null);
      if (subBook == null) {
        return ApiAnswer.error(
            400,
            "PARAM_ERROR",
            "sub_mchid " + subMchid + " is not bound to service provider " + simulator.mchid());
      }
      bill = planted(subMchid, day, subBook);
    } else {
      bill = planted("0", day, book);
    }
    if (bill == null) {
      return ApiAnswer.error(400, "NO_STATEMENT_EXIST", "No statement exist");
    }
    byte[] body = gzip ? gzip(bill[0]) : bill[0];
    String token = "b" + tokens.incrementAndGet() + WeChatCrypto.digits(12);
    synchronized (prepared) {
      prepared.put(token, new Prepared(body, gzip));
      while (prepared.size() > MAX_PREPARED) {
        prepared.remove(prepared.keySet().iterator().next());
      }
    }
    ObjectNode answer =
        JSON.createObjectNode()
            .put("hash_type", "SHA1")
            .put("hash_value", HexFormat.of().formatHex(bill[1]))
            .put("download_url", simulator.baseUrl() + DOWNLOAD_PATH + "?token=" + token);
    return ApiAnswer.ok(answer);
  }

  private void download(HttpExchange exchange, String token) throws IOException {
    Prepared bill;
    synchronized (prepared) {
      bill = token == null ? null : prepared.remove(token);
    }
    if (bill == null) {
      api.send(exchange, ApiAnswer.error(400, "PARAM_ERROR", "download token unknown or used"));
      return;
    }
    downloads.incrementAndGet();
    byte[] body = bill.body();
    if (corrupt.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      body = alter(body, bill.gzip());
    }
    exchange
        .getResponseHeaders()
        .set("Content-Type", bill.gzip() ? "application/gzip" : "text/plain;charset=utf-8");
    exchange.sendResponseHeaders(200, body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }

  /** [bill text, its SHA1]; null when the day has no line. */
  private byte[][] fromBook(TradeBook from, String subMchid, LocalDate day) {
    byte[][] bill =
        published.computeIfAbsent(
            Map.entry(subMchid, day),
            key -> from.read((trades, refunds) -> write(day, subMchid, trades, refunds)));
    return bill.length == 0 ? null : bill;
  }

  private byte[][] write(
      LocalDate day,
      String subMchid,
      Collection<SimulatedTrade> trades,
      Collection<ObjectNode> refunds) {
    Map<String, SimulatedTrade> byOutTradeNo = new HashMap<>();
    trades.forEach(t -> byOutTradeNo.put(t.outTradeNo, t));
    byte[][] encoded =
        encode(
            out -> {
              Writer text = new OutputStreamWriter(out, StandardCharsets.UTF_8);
              TradeBillWriter bill =
                  new TradeBillWriter(text, simulator.appid(), simulator.mchid(), subMchid);
              for (SimulatedTrade t : trades) {
                if (t.successTime != null && onDay(t.successTime, day)) {
                  bill.payment(
                      t.successTime,
                      t.transactionId,
                      t.outTradeNo,
                      t.payerOpenId,
                      t.amountFen,
                      t.description);
                }
              }
              for (JsonNode r : refunds) {
                Instant created = OffsetDateTime.parse(r.path("create_time").asText()).toInstant();
                SimulatedTrade t = byOutTradeNo.get(r.path("out_trade_no").asText());
                if (onDay(created, day)) {
                  bill.refund(
                      created,
                      r.path("transaction_id").asText(),
                      r.path("out_trade_no").asText(),
                      t == null ? "" : t.payerOpenId,
                      r.path("refund_id").asText(),
                      r.path("out_refund_no").asText(),
                      r.path("amount").path("refund").asLong(),
                      "SUCCESS",
                      t == null ? "" : t.description);
                }
              }
              return bill.finish();
            });
    return encoded == null ? new byte[0][] : encoded;
  }

  private static boolean onDay(Instant instant, LocalDate day) {
    return LocalDate.ofInstant(instant, TradeBook.BEIJING).equals(day);
  }

  private byte[][] planted(String subMchid, LocalDate day, TradeBook from) {
    Path file = planted.get(Map.entry(subMchid, day));
    if (file == null) {
      return fromBook(from, subMchid, day);
    }
    return encode(
        out -> {
          try (InputStream in = Files.newInputStream(file)) {
            in.transferTo(out);
          }
          return -1;
        });
  }

  /** Writes a bill's text to {@code out}; answers its lines (0: no statement, -1: not counted). */
  private interface Body {
    long write(OutputStream out) throws IOException;
  }

  /** The bill with one digit of its summary row changed; gzipped again when it was. */
  private static byte[] alter(byte[] body, boolean gzipped) {
    byte[] text = gzipped ? gunzip(body) : body.clone();
    int at = text.length - 3;
    text[at] = (byte) (text[at] == '1' ? '2' : '1');
    return gzipped ? gzip(text) : text;
  }

  private static byte[] gunzip(byte[] body) {
    try (java.util.zip.GZIPInputStream in =
        new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(body))) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("unzip the trade bill", e);
    }
  }

  private static byte[] gzip(byte[] text) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(text.length / 4 + 64);
    try (GZIPOutputStream zip = new GZIPOutputStream(bytes)) {
      zip.write(text);
    } catch (IOException e) {
      throw new UncheckedIOException("gzip the trade bill", e);
    }
    return bytes.toByteArray();
  }

  private static byte[][] encode(Body body) {
    try {
      MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      long lines;
      try (DigestOutputStream digesting = new DigestOutputStream(bytes, sha1)) {
        lines = body.write(digesting);
      }
      return lines == 0 ? null : new byte[][] {bytes.toByteArray(), sha1.digest()};
    } catch (IOException e) {
      throw new UncheckedIOException("write the trade bill", e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-1", e);
    }
  }

  private static Map<String, String> params(HttpExchange exchange) {
    Map<String, String> params = new HashMap<>();
    String query = exchange.getRequestURI().getQuery();
    if (query != null) {
      for (String pair : query.split("&")) {
        int eq = pair.indexOf('=');
        params.put(eq < 0 ? pair : pair.substring(0, eq), eq < 0 ? "" : pair.substring(eq + 1));
      }
    }
    return params;
  }
}
