package io.ordertimeout.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The payers of the busy-API scenario ({@code infra/bench/api-wrk.sh}): while wrk places orders at
 * the API's capacity, the wrk script appends the ids of one in PAY_EVERY placed orders to {@code
 * <dir>/pay-<thread>.txt}; this tails those files and pays each order as a user would, over HTTP
 * only: {@code POST /orders/{id}/prepay} on the stack's API, then the payer pays on the WeChat Pay
 * simulator ({@code POST /_sim/trades/{id}/pay}), which notifies the stack's {@code POST
 * /wechatpay/notify} webhook, signed and encrypted as WeChat does.
 *
 * <p>When {@code <dir>/stop} appears it pays what is queued and prints {@code busy-payer drained};
 * when {@code <dir>/check} appears it runs {@link BusyCheck} on the stack's MariaDB, prints the
 * summary and exits 0, or 1 when the check found a violation.
 *
 * <pre>
 * BusyPayer --api URL --sim URL --dir DIR --prefix wRUNID --jdbc URL --user U [--threads 8]
 * </pre>
 *
 * (the MariaDB password from OTC_MYSQL_PASSWORD, empty for the embedded server)
 */
public final class BusyPayer {
  private static final Duration POLL = Duration.ofMillis(20);

  private final URI api;
  private final URI sim;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Set<String> paidAtWeChat = ConcurrentHashMap.newKeySet();
  private final Map<String, Long> outcomes = new ConcurrentHashMap<>();

  BusyPayer(URI api, URI sim) {
    this.api = api;
    this.sim = sim;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> a = flags(args);
    Path dir = Path.of(a.get("dir"));
    BusyPayer payer = new BusyPayer(URI.create(a.get("api")), URI.create(a.get("sim")));
    ExecutorService workers =
        Executors.newFixedThreadPool(Integer.parseInt(a.getOrDefault("threads", "8")));
    Map<Path, Long> offsets = new HashMap<>();
    System.out.println("busy-payer ready");
    System.out.flush();
    boolean stopping = false;
    while (true) {
      // one last read after the stop file appeared: wrk has exited, so its files are complete
      stopping = stopping || Files.exists(dir.resolve("stop"));
      for (String id : newIds(dir, offsets)) {
        workers.execute(() -> payer.pay(id));
      }
      if (stopping) {
        break;
      }
      Thread.sleep(POLL.toMillis());
    }
    workers.shutdown();
    workers.awaitTermination(2, TimeUnit.MINUTES);
    System.out.println("busy-payer drained: " + new TreeMap<>(payer.outcomes));
    System.out.flush();
    while (!Files.exists(dir.resolve("check"))) {
      Thread.sleep(POLL.toMillis());
    }
    BusyCheck.Result result;
    try (HikariDataSource ds = pool(a.get("jdbc"), a.get("user"))) {
      result = BusyCheck.check(ds, a.get("prefix"), payer.paidAtWeChat());
    }
    System.out.print(result.summary());
    System.out.flush();
    System.exit(result.ok() ? 0 : 1);
  }

  /** Orders whose payment WeChat (the simulator) accepted. */
  Set<String> paidAtWeChat() {
    return Set.copyOf(paidAtWeChat);
  }

  /** How many pays ended which way, e.g. {@code paid: 812, prepay 409: 3}. */
  Map<String, Long> outcomes() {
    return new TreeMap<>(outcomes);
  }

  /**
   * Prepays then pays {@code orderId}; a refusal (the order expired or closed first: 409) is
   * counted, not retried, as a user who came too late would see it.
   */
  void pay(String orderId) {
    try {
      HttpResponse<String> prepay =
          post(
              api.resolve("/orders/" + orderId + "/prepay"),
              "{\"openId\":\"oBusyPayer" + orderId + "\"}");
      if (prepay.statusCode() != 200) {
        count("prepay " + prepay.statusCode());
        return;
      }
      HttpResponse<String> paid = post(sim.resolve("/_sim/trades/" + orderId + "/pay"), "{}");
      if (paid.statusCode() != 200) {
        count("pay " + paid.statusCode());
        return;
      }
      paidAtWeChat.add(orderId);
      count("paid");
    } catch (IOException e) {
      count("error " + e.getClass().getSimpleName());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      count("interrupted");
    }
  }

  private void count(String outcome) {
    outcomes.merge(outcome, 1L, Long::sum);
  }

  private HttpResponse<String> post(URI uri, String json) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /**
   * The complete lines appended to {@code dir/pay-*.txt} since the offsets (updated); a line still
   * being written (no newline yet) is read next time.
   */
  static java.util.List<String> newIds(Path dir, Map<Path, Long> offsets) throws IOException {
    java.util.List<String> ids = new java.util.ArrayList<>();
    java.util.List<Path> files;
    try (Stream<Path> list = Files.list(dir)) {
      files =
          list.filter(p -> p.getFileName().toString().matches("pay-\\d+\\.txt")).sorted().toList();
    }
    for (Path file : files) {
      long from = offsets.getOrDefault(file, 0L);
      try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
        long length = in.length();
        if (length <= from) {
          continue;
        }
        byte[] bytes = new byte[(int) (length - from)];
        in.seek(from);
        in.readFully(bytes);
        int end = lastNewline(bytes);
        if (end < 0) {
          continue;
        }
        String text = new String(bytes, 0, end, StandardCharsets.US_ASCII);
        for (String line : text.split("\n")) {
          if (!line.isBlank()) {
            ids.add(line.trim());
          }
        }
        offsets.put(file, from + end + 1);
      }
    }
    return ids;
  }

  private static int lastNewline(byte[] bytes) {
    for (int i = bytes.length - 1; i >= 0; i--) {
      if (bytes[i] == '\n') {
        return i;
      }
    }
    return -1;
  }

  private static HikariDataSource pool(String jdbcUrl, String user) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    config.setUsername(user);
    config.setPassword(System.getenv().getOrDefault("OTC_MYSQL_PASSWORD", ""));
    config.setMaximumPoolSize(2);
    config.setPoolName("busy-check");
    return new HikariDataSource(config);
  }

  private static Map<String, String> flags(String[] args) {
    Map<String, String> flags = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("expected --flag value, got " + args[i]);
      }
      flags.put(args[i].substring(2), args[i + 1]);
    }
    for (String required : new String[] {"api", "sim", "dir", "prefix", "jdbc", "user"}) {
      if (!flags.containsKey(required)) {
        throw new IllegalArgumentException("BusyPayer needs --" + required);
      }
    }
    return flags;
  }
}
