package io.ordertimeout.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.util.Json;
import io.ordertimeout.wiring.Components;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.sql.DataSource;

/**
 * The raw-SQL ceiling of a placement over HTTP: {@code POST /orders} with the order API's JSON
 * body, answered by the SQL a placement issues and nothing else - the idempotency read, then one
 * transaction: NOW(3), INSERT orders, INSERT order_items and RESERVE ledger rows (batched), INSERT
 * order_snapshots with its SHA-256, the conditional stock UPDATE - and a 201 with the order id. No
 * Redis timer, no event, no API Gateway payload, no validation beyond what the SQL needs. Same
 * shape as {@code ./local up}: com.sun HttpServer, 32 request threads, a 16-connection pool, the
 * local catalog's 200 SKUs {@code sku-0000..0199} of 10,000 each, on embedded MariaDB.
 *
 * <p>Run: {@code infra/bench/api-wrk.sh} starts it with {@code --port P} and measures it with the
 * same wrk command as the local API.
 */
public final class RawPlaceServer {
  private static final int THREADS = 32;
  private static final int SKUS = 200;
  private static final long STOCK_PER_SKU = 10_000;

  private final DataSource ds;

  private RawPlaceServer(DataSource ds) {
    this.ds = ds;
  }

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(arg(args, "--port", "18081"));
    EmbeddedServers servers = EmbeddedServers.get();
    String schema = servers.createSchema("rawplace");
    Map<String, String> env = new HashMap<>();
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_MYSQL_USER", servers.mysqlUser());
    env.put("OTC_MYSQL_PASSWORD", servers.mysqlPassword());
    env.put("OTC_DB_POOL_SIZE", "16");
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_KEY_PREFIX", servers.newKeyPrefix("rawplace"));
    env.put("OTC_MIGRATE_ON_START", "true");
    // Components only for the migrated schema and its pool, as the local stack builds them.
    Components app = new Components(OtcConfig.fromEnvironment(env));
    seed(app.dataSource());
    RawPlaceServer raw = new RawPlaceServer(app.dataSource());
    ExecutorService threads = Executors.newFixedThreadPool(THREADS);
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 128);
    server.setExecutor(threads);
    server.createContext("/orders", raw::handle);
    server.start();
    System.out.println("raw-place ready on http://127.0.0.1:" + port + "/orders");
    new CountDownLatch(1).await();
  }

  private static String arg(String[] args, String name, String fallback) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return fallback;
  }

  private static void seed(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT IGNORE INTO stock (tenant_id, sku_id, available, total) VALUES ('default', ?,?,?)")) {
      for (int i = 0; i < SKUS; i++) {
        ps.setString(1, String.format("sku-%04d", i));
        ps.setLong(2, STOCK_PER_SKU);
        ps.setLong(3, STOCK_PER_SKU);
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      byte[] body;
      try (InputStream in = exchange.getRequestBody()) {
        body = in.readAllBytes();
      }
      int status;
      String answer;
      try {
        JsonNode req = Json.MAPPER.readTree(body);
        String orderId = req.path("orderId").asText();
        status = place(req, orderId, sha256(new String(body, StandardCharsets.UTF_8)));
        answer = "{\"orderId\":\"" + orderId + "\",\"status\":\"UNPAID\"}";
      } catch (SQLException | RuntimeException e) {
        status = 500;
        answer = Json.error("INTERNAL", e.toString());
      }
      byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(status, bytes.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    }
  }

  /** The placement's SQL: 200 for an existing id, 409 when out of stock, else 201. */
  private int place(JsonNode req, String orderId, String hash) throws SQLException {
    try (Connection c = ds.getConnection()) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT request_hash FROM orders WHERE tenant_id = ? AND order_id = ?")) {
        ps.setString(1, req.path("tenantId").asText("default"));
        ps.setString(2, orderId);
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            return 200;
          }
        }
      }
      c.setAutoCommit(false);
      try {
        int status = insert(c, req, orderId, hash);
        if (status == 201) {
          c.commit();
        } else {
          c.rollback();
        }
        return status;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  private static int insert(Connection c, JsonNode req, String orderId, String hash)
      throws SQLException {
    Timestamp now;
    try (PreparedStatement ps = c.prepareStatement("SELECT NOW(3)");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      now = rs.getTimestamp(1);
    }
    Timestamp expireAt =
        new Timestamp(now.getTime() + req.path("timeoutSeconds").asLong(900) * 1_000);
    String tenant = req.path("tenantId").asText("default");
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO orders (order_id, tenant_id, user_id, status, amount_fen, coupon_id,"
                + " request_hash, created_at, expire_at) VALUES (?,?,?,'UNPAID',?,?,?,?,?)")) {
      ps.setString(1, orderId);
      ps.setString(2, tenant);
      ps.setString(3, req.path("userId").asText());
      ps.setLong(4, req.path("amountFen").asLong());
      ps.setString(5, null);
      ps.setString(6, hash);
      ps.setTimestamp(7, now);
      ps.setTimestamp(8, expireAt);
      ps.executeUpdate();
    }
    try (PreparedStatement items =
            c.prepareStatement(
                "INSERT INTO order_items (tenant_id, order_id, sku_id, quantity) VALUES ('default', ?,?,?)");
        PreparedStatement ledger =
            c.prepareStatement(
                "INSERT INTO stock_movements (tenant_id, order_id, sku_id, kind, quantity)"
                    + " VALUES ('default', ?,?,'RESERVE',?)")) {
      for (JsonNode item : req.path("items")) {
        for (PreparedStatement ps : new PreparedStatement[] {items, ledger}) {
          ps.setString(1, orderId);
          ps.setString(2, item.path("skuId").asText());
          ps.setInt(3, item.path("quantity").asInt());
          ps.addBatch();
        }
      }
      items.executeBatch();
      ledger.executeBatch();
    }
    ObjectNode snapshot = ((ObjectNode) req.deepCopy()).put("createdAt", now.toString());
    String doc = Json.write(snapshot);
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO order_snapshots (tenant_id, order_id, snapshot, checksum) VALUES ('default', ?,?,?)")) {
      ps.setString(1, orderId);
      ps.setString(2, doc);
      ps.setString(3, sha256(doc));
      ps.executeUpdate();
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE stock SET available = available - ?, reserved = reserved + ?"
                + " WHERE sku_id = ? AND tenant_id = ? AND available >= ?")) {
      for (JsonNode item : req.path("items")) {
        int q = item.path("quantity").asInt();
        ps.setInt(1, q);
        ps.setInt(2, q);
        ps.setString(3, item.path("skuId").asText());
        ps.setString(4, tenant);
        ps.setInt(5, q);
        if (ps.executeUpdate() != 1) {
          return 409;
        }
      }
    }
    return 201;
  }

  private static String sha256(String s) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 missing from this JVM", e);
    }
  }
}
