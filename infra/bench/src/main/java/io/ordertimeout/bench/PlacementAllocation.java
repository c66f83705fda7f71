package io.ordertimeout.bench;

import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.wiring.Components;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Locale;

/**
 * Bytes allocated per placed order: {@code orders} placements of one item each through what the
 * order-created handler calls - PlaceOrderRequests.parse of the JSON body, then
 * PlaceOrderService.place (idempotency read, the transaction, the Redis timer, the created event) -
 * on one thread, after a quarter as many for warm-up, on a fresh schema. Counted over every thread
 * of this JVM (Lettuce's I/O thread and Hikari's included), as the close figures are.
 */
final class PlacementAllocation {
  private PlacementAllocation() {}

  static String measure(EmbeddedServers servers, BenchSettings settings, int orders)
      throws Exception {
    String schema = servers.createSchema("bench_place");
    try (Components app = new Components(new CellRunner(servers, settings).config(schema))) {
      seedStock(app, 2L * orders);
      place(app, "pw", orders / 4);
      JvmMeter meter = JvmMeter.start();
      long t0 = System.nanoTime();
      place(app, "pm", orders);
      double seconds = (System.nanoTime() - t0) / 1e9;
      JvmMeter.Figures f = meter.read();
      return String.format(
          Locale.ROOT,
          "placement: %.1f KB allocated per placed order (%d placements on 1 thread via"
              + " PlaceOrderRequests.parse + PlaceOrderService.place, %.0f/s; %d GCs, %d ms; load"
              + " %.1f)",
          f.allocatedBytes() / 1024.0 / orders,
          orders,
          orders / seconds,
          f.gcCount(),
          f.gcMillis(),
          ProcStats.loadAverage());
    } finally {
      servers.dropSchema(schema);
    }
  }

  private static void seedStock(Components app, long units) throws SQLException {
    try (Connection c = app.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES ('default', ?,?,?)")) {
      for (int i = 0; i < 100; i++) {
        ps.setString(1, String.format("sku-%04d", i));
        ps.setLong(2, units);
        ps.setLong(3, units);
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  private static void place(Components app, String prefix, int count) {
    for (int i = 0; i < count; i++) {
      String body =
          String.format(
              "{\"orderId\":\"%s%08d\",\"userId\":\"user-%04d\",\"items\":[{\"skuId\":\"sku-%04d\","
                  + "\"quantity\":1}],\"amountFen\":100,\"timeoutSeconds\":900}",
              prefix, i, i % 500, i % 100);
      app.placeOrders()
          .place(app.placeOrderRequests().parse(body.getBytes(StandardCharsets.UTF_8)));
    }
  }
}
