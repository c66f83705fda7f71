package io.ordertimeout.local;

import io.ordertimeout.mysql.DataAccessException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import javax.sql.DataSource;

/**
 * The demo catalogue the local stack seeds: 200 ordinary SKUs, one hot SKU that many orders share
 * (the case docs/concepts/design.md, the close path says must not serialise on its stock row), and
 * one coupon per demo user. INSERT IGNORE: seeding an already seeded schema changes nothing.
 */
final class DemoCatalog {
  static final int SKUS = 200;
  static final String HOT_SKU = "sku-hot";
  static final int USERS = 500;

  /**
   * 10,000 per SKU: 2,000 demo orders of 1-3 lines never run one out; the hot SKU gets enough for
   * every line of 100,000 orders.
   */
  static final long STOCK_PER_SKU = 10_000;

  static final long HOT_SKU_STOCK = 1_000_000;

  private DemoCatalog() {}

  static String sku(int n) {
    return String.format("sku-%04d", n);
  }

  static String user(int n) {
    return String.format("user-%04d", n);
  }

  static String coupon(int user) {
    return "cpn-" + user(user);
  }

  private static final String STOCK_INSERT =
      "INSERT IGNORE INTO stock (tenant_id, sku_id, available, total) VALUES ('default', ?, ?, ?)";

  static void seed(DataSource dataSource) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement stock = c.prepareStatement(STOCK_INSERT)) {
        for (int i = 0; i < SKUS; i++) {
          addStock(stock, sku(i), STOCK_PER_SKU);
        }
        addStock(stock, HOT_SKU, HOT_SKU_STOCK);
        stock.executeBatch();
      }
      try (PreparedStatement coupons =
          c.prepareStatement(
              "INSERT IGNORE INTO coupons (tenant_id, coupon_id, owner_user_id) VALUES ('default', ?, ?)")) {
        for (int u = 0; u < USERS; u++) {
          coupons.setString(1, coupon(u));
          coupons.setString(2, user(u));
          coupons.addBatch();
        }
        coupons.executeBatch();
      }
      c.commit();
    } catch (SQLException e) {
      throw new DataAccessException("could not seed the demo SKUs and coupons", e, false);
    }
  }

  /**
   * {@code quantity} of each of {@code skus} for the default tenant; a SKU already there is left as
   * it is.
   */
  static void seedStock(DataSource dataSource, List<String> skus, long quantity) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement stock = c.prepareStatement(STOCK_INSERT)) {
      for (String sku : skus) {
        addStock(stock, sku, quantity);
      }
      stock.executeBatch();
    } catch (SQLException e) {
      throw new DataAccessException("could not seed the SKUs " + skus, e, false);
    }
  }

  private static void addStock(PreparedStatement stock, String sku, long quantity)
      throws SQLException {
    stock.setString(1, sku);
    stock.setLong(2, quantity);
    stock.setLong(3, quantity);
    stock.addBatch();
  }
}
