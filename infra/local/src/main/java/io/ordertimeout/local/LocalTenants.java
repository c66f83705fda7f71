package io.ordertimeout.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import io.ordertimeout.config.TenantSettings;
import io.ordertimeout.mysql.DataAccessException;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.sql.DataSource;

/**
 * Onboarding a tenant on the running local stack, behind {@code POST /_local/tenants} ({@code GET}
 * lists them), which {@code ./local tenant} calls: the same steps as on AWS
 * (docs/operations/onboarding.md, tenant"), done by the process that owns them. The tenant row and
 * its stock in one transaction, then its merchant account in {@link LocalMerchants}; the answer
 * also says whether this stack's caller may act for the tenant (OTC_TENANT_PRINCIPALS is read at
 * start, as on AWS at init) and the mapping line that lets it.
 *
 * <p>Idempotent: a tenant, SKU or merchant already there is left exactly as it is (a SKU keeps its
 * stock even when another quantity is asked; the answer shows both), and {@code changed} is false
 * when nothing was added.
 */
final class LocalTenants {
  /** Under the API's address, outside every template route (they start /orders, /coupons, ...). */
  static final String PATH = "/_local/tenants";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final DataSource dataSource;
  private final LocalMerchants merchants;
  private final TenantSettings principals;

  LocalTenants(DataSource dataSource, LocalMerchants merchants, TenantSettings principals) {
    this.dataSource = dataSource;
    this.merchants = merchants;
    this.principals = principals;
  }

  /** Adds what is missing of {@code spec}; answers what it found and did. */
  ObjectNode add(TenantSpec spec) {
    ObjectNode answer = JSON.createObjectNode().put("tenantId", spec.tenantId());
    boolean changed;
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        changed = insertTenant(c, spec.tenantId());
        answer.put("tenantAdded", changed);
        ArrayNode stock = answer.putArray("stock");
        for (Map.Entry<String, Long> sku : spec.stock().entrySet()) {
          ObjectNode line =
              stock.addObject().put("skuId", sku.getKey()).put("asked", sku.getValue());
          boolean added = insertStock(c, spec.tenantId(), sku.getKey(), sku.getValue());
          line.put("added", added);
          readStock(c, spec.tenantId(), sku.getKey(), line);
          changed |= added;
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    } catch (SQLException e) {
      throw new DataAccessException("could not onboard tenant " + spec.tenantId(), e, false);
    }
    boolean merchantAdded = merchants.add(spec.tenantId());
    answer.put("merchantAdded", merchantAdded);
    answer.put("changed", changed || merchantAdded);
    describe(spec.tenantId(), answer);
    return answer;
  }

  /**
   * Every tenant with its stock summary, merchant and whether this stack's caller may act for it.
   */
  ObjectNode list() {
    ObjectNode answer = JSON.createObjectNode();
    ArrayNode tenants = answer.putArray("tenants");
    String sql =
        "SELECT t.tenant_id, COUNT(s.sku_id), COALESCE(SUM(s.available), 0) FROM tenants t"
            + " LEFT JOIN stock s ON s.tenant_id = t.tenant_id"
            + " GROUP BY t.tenant_id ORDER BY t.tenant_id";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        ObjectNode t =
            tenants
                .addObject()
                .put("tenantId", rs.getString(1))
                .put("skus", rs.getLong(2))
                .put("available", rs.getLong(3));
        describe(rs.getString(1), t);
      }
    } catch (SQLException e) {
      throw new DataAccessException("could not list the tenants", e, false);
    }
    return answer;
  }

  private void describe(String tenantId, ObjectNode out) {
    merchants
        .of(tenantId)
        .ifPresentOrElse(
            m -> out.put("mchid", m.mchid()).put("notifyUrl", m.notifyUrlFor(tenantId)),
            () -> out.putNull("mchid").putNull("notifyUrl"));
    out.put("caller", PayloadV2.LOCAL_CALLER);
    out.put("callerMayAct", mayAct(tenantId));
    out.put("principals", principalsWith(tenantId));
  }

  private boolean mayAct(String tenantId) {
    Set<String> tenants = principals.tenantsOf(PayloadV2.LOCAL_CALLER);
    return tenants.contains(tenantId) || tenants.contains(TenantSettings.ALL);
  }

  /**
   * OTC_TENANT_PRINCIPALS as this stack has it, with the local caller also mapped to the tenant:
   * unset means every caller acts for {@code default}, so that entry keeps {@code default}.
   */
  private String principalsWith(String tenantId) {
    Map<String, Set<String>> mapping = new TreeMap<>();
    if (principals.isSet()) {
      principals
          .principals()
          .entries()
          .forEach((arn, tenants) -> mapping.put(arn, new TreeSet<>(tenants)));
    } else {
      mapping.put(PayloadV2.LOCAL_CALLER, new TreeSet<>(List.of(TenantSettings.DEFAULT_TENANT)));
    }
    Set<String> mine = mapping.computeIfAbsent(PayloadV2.LOCAL_CALLER, k -> new TreeSet<>());
    if (!mayAct(tenantId)) {
      mine.add(tenantId);
    }
    try {
      return JSON.writeValueAsString(mapping);
    } catch (IOException e) {
      throw new IllegalStateException("a map of strings did not serialise", e);
    }
  }

  private static boolean insertTenant(Connection c, String tenantId) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("INSERT IGNORE INTO tenants (tenant_id) VALUES (?)")) {
      ps.setString(1, tenantId);
      return ps.executeUpdate() == 1;
    }
  }

  private static boolean insertStock(Connection c, String tenantId, String sku, long units)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT IGNORE INTO stock (tenant_id, sku_id, available, total) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, tenantId);
      ps.setString(2, sku);
      ps.setLong(3, units);
      ps.setLong(4, units);
      return ps.executeUpdate() == 1;
    }
  }

  private static void readStock(Connection c, String tenantId, String sku, ObjectNode line)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT available, reserved, sold, total FROM stock WHERE tenant_id = ? AND sku_id = ?")) {
      ps.setString(1, tenantId);
      ps.setString(2, sku);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new IllegalStateException(
              "stock of tenant " + tenantId + " SKU " + sku + " missing right after its insert");
        }
        line.put("available", rs.getLong(1))
            .put("reserved", rs.getLong(2))
            .put("sold", rs.getLong(3))
            .put("total", rs.getLong(4));
      }
    }
  }

  // ---- HTTP ----

  /** {@code GET} lists, {@code POST} adds; 400 with the reason for bad input, nothing written. */
  void serve(HttpExchange exchange) throws IOException {
    try {
      String method = exchange.getRequestMethod().toUpperCase();
      if (!exchange.getRequestURI().getRawPath().equals(PATH)) {
        send(exchange, 404, error("NOT_FOUND", "only " + PATH + " is served here"));
        return;
      }
      switch (method) {
        case "GET" -> send(exchange, 200, list());
        case "POST" -> {
          TenantSpec spec;
          try {
            JsonNode body = JSON.readTree(exchange.getRequestBody().readAllBytes());
            spec = TenantSpec.fromJson(body);
          } catch (IOException | IllegalArgumentException e) {
            send(exchange, 400, error("INVALID_REQUEST", e.getMessage()));
            return;
          }
          send(exchange, 200, add(spec));
        }
        default -> send(exchange, 405, error("METHOD_NOT_ALLOWED", method + " " + PATH));
      }
    } catch (RuntimeException e) {
      send(exchange, 500, error("INTERNAL", String.valueOf(e.getMessage())));
    } finally {
      exchange.close();
    }
  }

  private static ObjectNode error(String code, String message) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("error").put("code", code).put("message", message);
    return body;
  }

  private static void send(HttpExchange exchange, int status, JsonNode body) throws IOException {
    byte[] bytes = JSON.writeValueAsBytes(body);
    exchange.getResponseHeaders().put("content-type", List.of("application/json"));
    exchange.sendResponseHeaders(status, bytes.length);
    exchange.getResponseBody().write(bytes);
  }
}
