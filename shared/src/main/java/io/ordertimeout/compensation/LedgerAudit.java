package io.ordertimeout.compensation;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.compensation.CompensationReport.Finding;
import io.ordertimeout.domain.OrderStatus;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.util.Json;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Category d: each recent order against its snapshot and its ledger, and every SKU against the
 * stock invariants (docs/concepts/design.md, invariants 1-3).
 *
 * <p>One repair only is treated as certain: a CLOSED order whose RESERVE rows match its items, with
 * no SELL, that lacks its RELEASE row for a SKU whose {@code reserved} exceeds the UNPAID orders'
 * demand by exactly the quantity such orders lack (and whose available + reserved + sold still
 * equals total). That is precisely the state a close leaves when its order UPDATE survived but its
 * ledger and stock writes did not: the order proves the stock was reserved for it and never sold,
 * the SKU proves exactly that much is stranded in reserved, and nothing else on the SKU is off. The
 * repair inserts the RELEASE rows and moves the quantity reserved -> available in one transaction
 * that re-checks all of it under the row locks. Everything else (a missing snapshot, a changed
 * amount, a SELL on a CLOSED order, a stock row off by N with no order to explain it, an excess
 * that does not match the missing rows exactly) has more than one possible cause and is only
 * flagged.
 *
 * <p>Over 300 lines: the ledger rules per status and the repair-or-flag decision for each mismatch
 * kind; each rule is a short method, and splitting them by kind would scatter the one table of what
 * the ledger must hold.
 */
final class LedgerAudit {
  static final String SNAPSHOT_MISSING = "SNAPSHOT_MISSING";
  static final String SNAPSHOT_CHECKSUM = "SNAPSHOT_CHECKSUM";
  static final String SNAPSHOT_MISMATCH = "SNAPSHOT_MISMATCH";
  static final String LEDGER_MISMATCH = "LEDGER_MISMATCH";
  static final String STOCK_DRIFT = "STOCK_DRIFT";
  static final String MISSING_RELEASE = "MISSING_RELEASE";

  private final Tx tx;
  private final Flags flags;
  private final CompensationSettings settings;

  LedgerAudit(Tx tx, Flags flags, CompensationSettings settings) {
    this.tx = tx;
    this.flags = flags;
    this.settings = settings;
  }

  private record OrderRow(
      String orderId,
      String tenantId,
      String userId,
      String status,
      long amountFen,
      String couponId,
      LocalDateTime createdAt) {}

  /** One ledger row kind of one SKU of one order. */
  private record Movement(String skuId, String kind, int quantity) {}

  private record Snapshot(String text, String checksum) {}

  /** A CLOSED order lacking the RELEASE row of one item, otherwise consistent. */
  record Missing(String tenantId, String orderId, String skuId, int quantity) {}

  /**
   * A map key of a tenant's order or SKU: a page spans tenants, and two tenants may have the same
   * ids. Tenant ids hold no '/', so the key is unambiguous.
   */
  static String key(String tenantId, String id) {
    return tenantId + "/" + id;
  }

  private record Page(
      List<OrderRow> orders,
      Map<String, Map<String, Integer>> items,
      Map<String, List<Movement>> ledger,
      Map<String, Snapshot> snapshots) {}

  /** Checks the orders created within the window, then every SKU; repairs what is certain. */
  void run(Tally tally) {
    List<Missing> missing = new ArrayList<>();
    auditOrders(tally, missing);
    Map<String, List<Missing>> bySku = new TreeMap<>();
    missing.forEach(
        m -> bySku.computeIfAbsent(key(m.tenantId(), m.skuId()), k -> new ArrayList<>()).add(m));
    auditStock(tally, bySku);
  }

  // ---- orders against snapshots and ledger

  private void auditOrders(Tally tally, List<Missing> missing) {
    LocalDateTime since =
        tx.read("compensation window", c -> Sql.dbNowMinus(c, settings.recentWindow().toMillis()));
    LocalDateTime afterAt = since;
    String afterTenant = "";
    String afterId = "";
    while (tally.page("orders_audited")) {
      LocalDateTime at = afterAt;
      String tenant = afterTenant;
      String id = afterId;
      Page page =
          Sql.snapshot(
              tx, "audit orders after " + tenant + "/" + id, c -> loadPage(c, at, tenant, id));
      if (page.orders().isEmpty()) {
        return;
      }
      for (OrderRow order : page.orders()) {
        audit(tally, order, page, missing);
      }
      OrderRow last = page.orders().get(page.orders().size() - 1);
      afterAt = last.createdAt();
      afterTenant = last.tenantId();
      afterId = last.orderId();
      tally.add("orders_audited", page.orders().size());
      if (page.orders().size() < settings.pageSize()) {
        return;
      }
    }
  }

  private Page loadPage(Connection c, LocalDateTime afterAt, String afterTenant, String afterId)
      throws SQLException {
    List<OrderRow> orders = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT order_id, tenant_id, user_id, status, amount_fen, coupon_id, created_at"
                + " FROM orders WHERE created_at >= ? AND (created_at > ? OR (created_at = ? AND"
                + " (tenant_id > ? OR (tenant_id = ? AND order_id > ?))))"
                + " ORDER BY created_at, tenant_id, order_id LIMIT ?")) {
      DbTime.bind(ps, 1, afterAt);
      DbTime.bind(ps, 2, afterAt);
      DbTime.bind(ps, 3, afterAt);
      ps.setString(4, afterTenant);
      ps.setString(5, afterTenant);
      ps.setString(6, afterId);
      ps.setInt(7, settings.pageSize());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          orders.add(
              new OrderRow(
                  rs.getString("order_id"),
                  rs.getString("tenant_id"),
                  rs.getString("user_id"),
                  rs.getString("status"),
                  rs.getLong("amount_fen"),
                  rs.getString("coupon_id"),
                  DbTime.utc(rs, "created_at")));
        }
      }
    }
    if (orders.isEmpty()) {
      return new Page(orders, Map.of(), Map.of(), Map.of());
    }
    Map<String, List<String>> byTenant = new TreeMap<>();
    orders.forEach(
        o -> byTenant.computeIfAbsent(o.tenantId(), t -> new ArrayList<>()).add(o.orderId()));
    Map<String, Map<String, Integer>> items = new LinkedHashMap<>();
    Map<String, List<Movement>> ledger = new LinkedHashMap<>();
    Map<String, Snapshot> snapshots = new LinkedHashMap<>();
    for (Map.Entry<String, List<String>> tenant : byTenant.entrySet()) {
      items(c, tenant.getKey(), tenant.getValue(), items);
      ledger(c, tenant.getKey(), tenant.getValue(), ledger);
      snapshots(c, tenant.getKey(), tenant.getValue(), snapshots);
    }
    return new Page(orders, items, ledger, snapshots);
  }

  /** Keys of the maps below: {@link #key}(tenant, order id). */
  private static void items(
      Connection c, String tenantId, List<String> ids, Map<String, Map<String, Integer>> items)
      throws SQLException {
    Sql.selectIn(
        c,
        "SELECT order_id, sku_id, quantity FROM order_items WHERE tenant_id = ? AND order_id IN (%s)",
        tenantId,
        ids,
        rs ->
            items
                .computeIfAbsent(key(tenantId, rs.getString("order_id")), k -> new TreeMap<>())
                .put(rs.getString("sku_id"), rs.getInt("quantity")));
  }

  private static void ledger(
      Connection c, String tenantId, List<String> ids, Map<String, List<Movement>> ledger)
      throws SQLException {
    Sql.selectIn(
        c,
        "SELECT order_id, sku_id, kind, quantity FROM stock_movements"
            + " WHERE tenant_id = ? AND order_id IN (%s)",
        tenantId,
        ids,
        rs ->
            ledger
                .computeIfAbsent(key(tenantId, rs.getString("order_id")), k -> new ArrayList<>())
                .add(
                    new Movement(
                        rs.getString("sku_id"), rs.getString("kind"), rs.getInt("quantity"))));
  }

  private static void snapshots(
      Connection c, String tenantId, List<String> ids, Map<String, Snapshot> snapshots)
      throws SQLException {
    Sql.selectIn(
        c,
        "SELECT order_id, snapshot, checksum FROM order_snapshots"
            + " WHERE tenant_id = ? AND order_id IN (%s)",
        tenantId,
        ids,
        rs ->
            snapshots.put(
                key(tenantId, rs.getString("order_id")),
                new Snapshot(rs.getString("snapshot"), rs.getString("checksum"))));
  }

  private void audit(Tally tally, OrderRow order, Page page, List<Missing> missing) {
    String key = key(order.tenantId(), order.orderId());
    Map<String, Integer> items = page.items().getOrDefault(key, Map.of());
    checkSnapshot(tally, order, items, page.snapshots().get(key));
    List<Movement> ledger = page.ledger().getOrDefault(key, List.of());
    List<String> problems = new ArrayList<>();
    List<Missing> releases = new ArrayList<>();
    checkLedger(order, items, ledger, problems, releases);
    if (!problems.isEmpty()) {
      Map<String, Object> evidence = new LinkedHashMap<>();
      evidence.put("status", order.status());
      evidence.put("items", items);
      evidence.put("ledger", ledger.stream().map(Movement::toString).sorted().toList());
      evidence.put("problems", problems);
      flags.raise(tally, LEDGER_MISMATCH, order.tenantId(), order.orderId(), evidence);
    } else {
      missing.addAll(releases);
    }
  }

  /**
   * Problems of an order's ledger; a CLOSED order whose only problem is missing RELEASE rows goes
   * to {@code releases} instead (a repair candidate).
   */
  private static void checkLedger(
      OrderRow order,
      Map<String, Integer> items,
      List<Movement> ledger,
      List<String> problems,
      List<Missing> releases) {
    if (items.isEmpty()) {
      problems.add("order has no items");
    }
    Map<String, Map<String, Integer>> byKind = new TreeMap<>();
    for (Movement m : ledger) {
      if (!items.containsKey(m.skuId())) {
        problems.add(m.kind() + " of " + m.skuId() + " which is not an item");
      }
      byKind.computeIfAbsent(m.kind(), k -> new TreeMap<>()).put(m.skuId(), m.quantity());
    }
    expect(problems, "RESERVE", items, byKind.get("RESERVE"));
    Map<String, Integer> released = byKind.getOrDefault("RELEASE", Map.of());
    Map<String, Integer> sold = byKind.getOrDefault("SELL", Map.of());
    // every state after payment (SHIPPED ... COMPLETED) holds the ledger a payment left
    String status = paid(order.status()) ? "PAID" : order.status();
    switch (status) {
      case "UNPAID" -> {
        none(problems, "RELEASE", released);
        none(problems, "SELL", sold);
      }
      case "PAID" -> {
        expect(problems, "SELL", items, sold);
        none(problems, "RELEASE", released);
      }
      case "CLOSED" -> {
        none(problems, "SELL", sold);
        for (Map.Entry<String, Integer> item : items.entrySet()) {
          Integer q = released.get(item.getKey());
          if (q == null) {
            releases.add(
                new Missing(order.tenantId(), order.orderId(), item.getKey(), item.getValue()));
          } else if (q.intValue() != item.getValue()) {
            problems.add("RELEASE of " + item.getKey() + " is " + q + ", item " + item.getValue());
          }
        }
      }
      default -> problems.add("unknown status " + order.status());
    }
  }

  private static boolean paid(String status) {
    try {
      return OrderStatus.valueOf(status).paid();
    } catch (IllegalArgumentException e) {
      return false; // reported as an unknown status below
    }
  }

  private static void expect(
      List<String> problems, String kind, Map<String, Integer> items, Map<String, Integer> rows) {
    Map<String, Integer> found = rows == null ? Map.of() : rows;
    items.forEach(
        (sku, quantity) -> {
          Integer q = found.get(sku);
          if (q == null) {
            problems.add("no " + kind + " of " + sku);
          } else if (q.intValue() != quantity) {
            problems.add(kind + " of " + sku + " is " + q + ", item " + quantity);
          }
        });
  }

  private static void none(List<String> problems, String kind, Map<String, Integer> rows) {
    if (!rows.isEmpty()) {
      problems.add("unexpected " + kind + " " + rows);
    }
  }

  // ---- snapshots

  private void checkSnapshot(
      Tally tally, OrderRow order, Map<String, Integer> items, Snapshot snapshot) {
    if (snapshot == null) {
      flags.raise(
          tally,
          SNAPSHOT_MISSING,
          order.tenantId(),
          order.orderId(),
          Map.of("status", order.status()));
      return;
    }
    String actual = sha256(snapshot.text());
    if (!actual.equals(snapshot.checksum())) {
      flags.raise(
          tally,
          SNAPSHOT_CHECKSUM,
          order.tenantId(),
          order.orderId(),
          Map.of("stored", snapshot.checksum(), "computed", actual));
      return;
    }
    JsonNode parsed;
    try {
      parsed = Json.MAPPER.readTree(snapshot.text());
    } catch (JsonProcessingException e) {
      flags.raise(
          tally,
          SNAPSHOT_MISMATCH,
          order.tenantId(),
          order.orderId(),
          Map.of("unparseable", e.getOriginalMessage()));
      return;
    }
    List<String> diffs = diff(order, items, parsed);
    if (!diffs.isEmpty()) {
      flags.raise(
          tally,
          SNAPSHOT_MISMATCH,
          order.tenantId(),
          order.orderId(),
          Map.of("differences", diffs));
    }
  }

  private static List<String> diff(OrderRow order, Map<String, Integer> items, JsonNode snap) {
    List<String> diffs = new ArrayList<>();
    compare(diffs, "orderId", snap.path("orderId").asText(null), order.orderId());
    compare(diffs, "tenantId", snap.path("tenantId").asText(null), order.tenantId());
    compare(diffs, "userId", snap.path("userId").asText(null), order.userId());
    compare(diffs, "amountFen", snap.path("amountFen").asLong(-1), order.amountFen());
    JsonNode coupon = snap.path("couponId");
    compare(diffs, "couponId", coupon.isTextual() ? coupon.asText() : null, order.couponId());
    Map<String, Integer> snapItems = new TreeMap<>();
    snap.path("items")
        .forEach(i -> snapItems.put(i.path("skuId").asText(), i.path("quantity").asInt()));
    compare(diffs, "items", snapItems, items);
    return diffs;
  }

  private static void compare(List<String> diffs, String field, Object snapshot, Object order) {
    if (!Objects.equals(snapshot, order)) {
      diffs.add(field + ": snapshot " + snapshot + ", order " + order);
    }
  }

  static String sha256(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }

  // ---- stock

  private record StockRow(
      String tenantId, String skuId, long available, long reserved, long sold, long total) {}

  /** Pages the stock rows by primary key (tenant_id, sku_id). */
  private void auditStock(Tally tally, Map<String, List<Missing>> missing) {
    String afterTenant = "";
    String after = "";
    while (tally.page("skus_audited")) {
      String tenant = afterTenant;
      String from = after;
      Map<String, Long> demand = new TreeMap<>();
      List<StockRow> rows =
          Sql.snapshot(
              tx,
              "audit stock after " + tenant + "/" + from,
              c -> loadStock(c, tenant, from, demand));
      for (StockRow row : rows) {
        String key = key(row.tenantId(), row.skuId());
        checkSku(tally, row, demand.getOrDefault(key, 0L), missing.get(key));
      }
      tally.add("skus_audited", rows.size());
      if (rows.size() < settings.pageSize()) {
        return;
      }
      afterTenant = rows.get(rows.size() - 1).tenantId();
      after = rows.get(rows.size() - 1).skuId();
    }
  }

  /** {@code demand} is filled by {@link #key}(tenant, SKU). */
  private List<StockRow> loadStock(
      Connection c, String afterTenant, String after, Map<String, Long> demand)
      throws SQLException {
    List<StockRow> rows = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT tenant_id, sku_id, available, reserved, sold, total FROM stock"
                + " WHERE tenant_id > ? OR (tenant_id = ? AND sku_id > ?)"
                + " ORDER BY tenant_id, sku_id LIMIT ?")) {
      ps.setString(1, afterTenant);
      ps.setString(2, afterTenant);
      ps.setString(3, after);
      ps.setInt(4, settings.pageSize());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(
              new StockRow(
                  rs.getString("tenant_id"),
                  rs.getString("sku_id"),
                  rs.getLong("available"),
                  rs.getLong("reserved"),
                  rs.getLong("sold"),
                  rs.getLong("total")));
        }
      }
    }
    Map<String, List<String>> byTenant = new TreeMap<>();
    rows.forEach(
        r -> byTenant.computeIfAbsent(r.tenantId(), t -> new ArrayList<>()).add(r.skuId()));
    for (Map.Entry<String, List<String>> tenant : byTenant.entrySet()) {
      unpaidDemand(c, tenant.getKey(), tenant.getValue())
          .forEach((sku, qty) -> demand.put(key(tenant.getKey(), sku), qty));
    }
    return rows;
  }

  /**
   * Sum of UNPAID orders' quantities per SKU. Read from the UNPAID orders (the status index), so
   * the cost follows the open orders, not every order the SKU ever had.
   */
  static Map<String, Long> unpaidDemand(Connection c, String tenantId, List<String> skus)
      throws SQLException {
    Map<String, Long> demand = new TreeMap<>();
    // one SKU is in one part only, so each part's sums are whole
    Sql.selectIn(
        c,
        "SELECT oi.sku_id, SUM(oi.quantity) AS demand FROM orders o"
            + " JOIN order_items oi ON oi.tenant_id = o.tenant_id AND oi.order_id = o.order_id"
            + " WHERE o.status = 'UNPAID' AND o.tenant_id = ? AND oi.sku_id IN (%s)"
            + " GROUP BY oi.sku_id",
        tenantId,
        skus,
        rs -> demand.put(rs.getString("sku_id"), rs.getLong("demand")));
    return demand;
  }

  private void checkSku(Tally tally, StockRow row, long demand, List<Missing> missing) {
    long stranded = row.reserved() - demand;
    boolean totalOk = row.available() + row.reserved() + row.sold() == row.total();
    long missingQty = missing == null ? 0 : missing.stream().mapToLong(Missing::quantity).sum();
    if (missing != null && totalOk && stranded == missingQty) {
      new ReleaseRepair(tx).repair(tally, row.tenantId(), row.skuId(), missing, flags);
      return;
    }
    if (missing != null) {
      for (Missing m : missing) {
        flags.raise(
            tally,
            MISSING_RELEASE,
            m.tenantId(),
            m.orderId(),
            evidence(row, demand, m, missingQty));
      }
    }
    if (!totalOk || stranded != 0) {
      Map<String, Object> evidence = stockEvidence(row, demand);
      flags.raise(tally, STOCK_DRIFT, row.tenantId(), row.skuId(), evidence);
    }
  }

  private static Map<String, Object> evidence(
      StockRow row, long demand, Missing m, long missingQty) {
    Map<String, Object> e = stockEvidence(row, demand);
    e.put("skuId", m.skuId());
    e.put("missingReleaseQuantity", m.quantity());
    e.put("missingReleasesOnSku", missingQty);
    return e;
  }

  private static Map<String, Object> stockEvidence(StockRow row, long demand) {
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("available", row.available());
    e.put("reserved", row.reserved());
    e.put("sold", row.sold());
    e.put("total", row.total());
    e.put("unpaidDemand", demand);
    e.put("reservedMinusDemand", row.reserved() - demand);
    e.put("totalMinusSum", row.total() - row.available() - row.reserved() - row.sold());
    return e;
  }

  static Finding repairFinding(String tenantId, String skuId, List<Missing> repaired) {
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("tenantId", tenantId);
    e.put("skuId", skuId);
    e.put("orders", repaired.stream().map(Missing::orderId).toList());
    e.put("quantity", repaired.stream().mapToLong(Missing::quantity).sum());
    return new Finding("RELEASE_INSERTED", skuId, e);
  }
}
