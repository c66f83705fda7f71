package io.ordertimeout.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.wiring.Components;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bench's correctness checks can fail: a baseline that releases stock twice, or closes orders
 * that were paid, is reported as violating (invariants FAILED, shown in the table), so it can never
 * be timed as a winner. Each broken baseline is the 20 ms cron scan (correct on its own, see
 * BenchSmokeTest) plus one deliberate fault applied before the checks run.
 */
class BaselineViolationTest {
  @TempDir Path out;

  private final BenchSettings settings =
      BenchSettings.parse(new String[] {"--time-scale", "0.02", "--out", "unused"});

  @Test
  void aBaselineThatReleasesStockTwiceIsReportedAsViolating() throws Exception {
    CellResult r =
        runBroken(
            "double-release",
            // every closed order's items go back to available a second time (reserved went
            // down once, at the close; the CHECK constraint stops it going below 0)
            "UPDATE stock s JOIN (SELECT i.sku_id, SUM(i.quantity) AS q FROM order_items i"
                + " JOIN orders o ON o.order_id = i.order_id WHERE o.status = 'CLOSED'"
                + " GROUP BY i.sku_id) r ON s.sku_id = r.sku_id"
                + " SET s.available = s.available + r.q");

    assertThat(r.drained()).isTrue();
    assertThat(r.closedTimeout()).isPositive();
    assertThat(r.invariantsOk()).isFalse();
    assertThat(r.invariants()).startsWith("FAILED: ").contains("invariant");
    assertThat(Report.table(List.of(r))).contains("| FAILED: ").doesNotContain("| OK |");
  }

  @Test
  void aBaselineThatClosesPaidOrdersIsReportedAsViolating() throws Exception {
    CellResult r =
        runBroken(
            "closes-paid",
            // a closer without the status condition: paid orders end CLOSED as well
            "UPDATE orders SET status = 'CLOSED', paid_at = NULL, closed_at = NOW(3),"
                + " close_reason = 'TIMEOUT' WHERE status = 'PAID'");

    assertThat(r.invariantsOk()).isFalse();
    assertThat(r.invariants()).startsWith("FAILED: ").contains("SELL");
    assertThat(Report.table(List.of(r))).contains("| FAILED: ");
  }

  private CellResult runBroken(String label, String faultSql) throws Exception {
    Scenario s1 =
        Scenario.all(1, settings.timeScale()).stream()
            .filter(s -> s.name().equals("S1"))
            .findFirst()
            .orElseThrow()
            .withOrders(200);
    CellRunner runner = new CellRunner(EmbeddedServers.get(), settings);
    CellResult r =
        runner.run(
            s1,
            s1.generate(),
            label,
            app -> new Faulty(app, new CronScanSystem(app, label, 20, 2), faultSql));
    assertThat(r.paid()).as("the scenario pays some orders").isPositive();
    return r;
  }

  /** A working baseline whose stop() applies one fault, so the checks after it must see it. */
  private static final class Faulty implements ClosingSystem {
    private final Components app;
    private final ClosingSystem inner;
    private final String faultSql;

    Faulty(Components app, ClosingSystem inner, String faultSql) {
      this.app = app;
      this.inner = inner;
      this.faultSql = faultSql;
    }

    @Override
    public String name() {
      return inner.name();
    }

    @Override
    public String description() {
      return inner.description() + " with a fault";
    }

    @Override
    public long scheduleMicrosPerOrder() {
      return inner.scheduleMicrosPerOrder();
    }

    @Override
    public void schedule(Map<String, Long> deadlines) throws Exception {
      inner.schedule(deadlines);
    }

    @Override
    public void start() {
      inner.start();
    }

    @Override
    public void onPaid(List<String> orderIds) {
      inner.onPaid(orderIds);
    }

    @Override
    public void stop() throws InterruptedException {
      inner.stop();
      try (Connection c = app.dataSource().getConnection();
          Statement st = c.createStatement()) {
        assertThat(st.executeUpdate(faultSql)).as(faultSql).isPositive();
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
    }
  }
}
