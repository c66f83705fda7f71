package io.ordertimeout.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.wiring.Components;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The busy scenario's end-state check can fail: on 20 orders seeded as placements and closed by the
 * real closer it reports placed/closed and the lag, and it reports an order left UNPAID, a closed
 * order WeChat took the money for, and stock released twice. BusyPayer reads only complete lines of
 * the wrk script's files.
 */
class BusyCheckTest {
  @TempDir Path dir;

  private final EmbeddedServers servers = EmbeddedServers.get();
  private final BenchSettings settings =
      BenchSettings.parse(new String[] {"--time-scale", "0.02", "--out", "unused"});
  private String schema;
  private Components app;
  private List<String> ids;

  @BeforeEach
  void seedAndCloseAllButOne() throws Exception {
    schema = servers.createSchema("busycheck");
    app = new Components(new CellRunner(servers, settings).config(schema));
    Scenario s1 =
        Scenario.all(1, settings.timeScale()).stream()
            .filter(s -> s.name().equals("S1"))
            .findFirst()
            .orElseThrow()
            .withOrders(20);
    List<Scenario.Order> orders = s1.generate();
    BenchSeeder.seed(app.dataSource(), orders);
    // every deadline an hour ago
    BenchSeeder.moveTo(app.dataSource(), BenchSeeder.dbNow(app.dataSource()).minusHours(1));
    ids = orders.stream().map(Scenario.Order::id).toList();
    app.closer().close("default", ids.subList(1, ids.size()), CloseReason.TIMEOUT);
  }

  @AfterEach
  void drop() {
    app.close();
    servers.dropSchema(schema);
  }

  @Test
  void countsAndLagOfAConsistentRunAndAnOrderLeftUnpaid() throws Exception {
    BusyCheck.Result r = BusyCheck.check(app.dataSource(), "s1-", Set.of());

    assertThat(r.placed()).isEqualTo(20);
    assertThat(r.closed()).isEqualTo(19);
    assertThat(r.closedTimeout()).isEqualTo(19);
    assertThat(r.paid()).isZero();
    // closed about an hour after the deadline
    assertThat(r.lagMillis().getValueAtPercentile(50)).isBetween(3_500_000L, 3_700_000L);
    assertThat(r.ok()).isFalse();
    assertThat(r.violations())
        .containsExactly(ids.get(0) + " ended UNPAID, neither CLOSED nor PAID");
    assertThat(r.summary()).contains("placed 20, paid 0, closed 19").contains("check: FAILED, 1");

    app.closer().close("default", List.of(ids.get(0)), CloseReason.TIMEOUT);
    BusyCheck.Result all = BusyCheck.check(app.dataSource(), "s1-", Set.of());
    assertThat(all.violations()).isEmpty();
    assertThat(all.summary()).contains("closed 20").contains("check: OK");
  }

  @Test
  void aClosedOrderWeChatTookTheMoneyForAndADoubleReleaseAreViolations() throws Exception {
    app.closer().close("default", List.of(ids.get(0)), CloseReason.TIMEOUT);
    try (Connection c = app.dataSource().getConnection();
        Statement st = c.createStatement()) {
      st.executeUpdate(
          "UPDATE stock SET available = available + 1 WHERE sku_id = (SELECT sku_id FROM"
              + " order_items WHERE order_id = '"
              + ids.get(3)
              + "')");
    }

    BusyCheck.Result r = BusyCheck.check(app.dataSource(), "s1-", Set.of(ids.get(2)));

    assertThat(r.ok()).isFalse();
    assertThat(r.violations())
        .contains(ids.get(2) + " is CLOSED although WeChat took its payment")
        .anyMatch(v -> v.contains("invariant"));
  }

  @Test
  void thePayerReadsOnlyCompleteLinesOnce() throws Exception {
    Path file = dir.resolve("pay-01.txt");
    Files.writeString(file, "w000001010000004\nw0000010100000", StandardCharsets.US_ASCII);
    Map<Path, Long> offsets = new HashMap<>();

    assertThat(BusyPayer.newIds(dir, offsets)).containsExactly("w000001010000004");
    Files.writeString(
        file,
        "w000001010000004\nw000001010000008\n",
        StandardCharsets.US_ASCII,
        java.nio.file.StandardOpenOption.TRUNCATE_EXISTING);
    Files.writeString(dir.resolve("other.txt"), "x\n", StandardCharsets.US_ASCII);
    assertThat(BusyPayer.newIds(dir, offsets)).containsExactly("w000001010000008");
    assertThat(BusyPayer.newIds(dir, offsets)).isEmpty();
  }
}
