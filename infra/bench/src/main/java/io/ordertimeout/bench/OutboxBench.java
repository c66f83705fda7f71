package io.ordertimeout.bench;

import io.ordertimeout.config.OtcConfig;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.embedded.EmbeddedServers;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.outbox.OutboxRelay;
import io.ordertimeout.outbox.RelaySettings;
import io.ordertimeout.place.PlaceOrderService;
import io.ordertimeout.wiring.Components;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * What the outbox costs and how fast the relay drains it, in one run on the embedded servers:
 * placements per second with the outbox row (the production code) and without it (the same
 * PlaceOrderService over a DataSource whose connections turn the outbox INSERT into a no-op, so
 * nothing else differs), alternating rounds so drift hits both; then events relayed per second from
 * the outbox to the Redis stream (500-row batches, one script call each). Prints figures.
 *
 * <p>Run: {@code ./mvnw -q -pl infra/bench -am verify -DskipTests -Pbench -Dbench.main=OutboxBench
 * -Dbench.args="--orders 4000 --threads 4"}
 */
public final class OutboxBench {
  private OutboxBench() {}

  public static void main(String[] args) throws Exception {
    int orders = intArg(args, "--orders", 4_000);
    int threads = intArg(args, "--threads", 4);
    int rounds = 3;
    EmbeddedServers servers = EmbeddedServers.get();
    String schema = servers.createSchema("bench-outbox");
    try (Components app = new Components(config(servers, schema, threads))) {
      try (Connection c = app.dataSource().getConnection();
          Statement s = c.createStatement()) {
        s.executeUpdate(
            "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES ('default', 'sku-a', 100000000, 100000000),"
                + " ('default', 'sku-b', 100000000, 100000000)");
      }
      PlaceOrderService with = app.placeOrders();
      PlaceOrderService without =
          new PlaceOrderService(
              new Tx(withoutOutbox(app.dataSource())), app.timers(), app.metrics());
      double[] rateWith = new double[rounds];
      double[] rateWithout = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        rateWithout[r] = place(without, "n" + r, orders, threads);
        rateWith[r] = place(with, "w" + r, orders, threads);
        System.out.printf(
            "round %d: %,.0f placements/s without the outbox, %,.0f with it%n",
            r + 1, rateWithout[r], rateWith[r]);
      }
      double mWith = median(rateWith);
      double mWithout = median(rateWithout);
      System.out.printf(
          "median of %d rounds x %,d orders on %d threads: %,.0f/s without, %,.0f/s with the"
              + " outbox (%.1f%% fewer; %.0f us more per placement)%n",
          rounds,
          orders,
          threads,
          mWithout,
          mWith,
          100 * (1 - mWith / mWithout),
          1e6 * threads * (1 / mWith - 1 / mWithout));
      relay(app, rounds * orders);
    } finally {
      servers.dropSchema(schema);
    }
    System.exit(0);
  }

  private static void relay(Components app, int expected) {
    OutboxRelay relay = app.newRelay(RelaySettings.defaults(), null);
    long start = System.nanoTime();
    int moved = 0;
    for (int n = relay.relayOnce(); n > 0; n = relay.relayOnce()) {
      moved += n;
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    System.out.printf(
        "relayed %,d of %,d outbox rows to the stream in %.2f s: %,.0f events/s%n",
        moved, expected, seconds, moved / seconds);
  }

  private static double place(PlaceOrderService places, String tag, int orders, int threads)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    AtomicInteger next = new AtomicInteger();
    long start = System.nanoTime();
    try {
      List<Future<?>> done = new java.util.ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            pool.submit(
                () -> {
                  for (int i = next.getAndIncrement(); i < orders; i = next.getAndIncrement()) {
                    places.place(command(tag, i));
                  }
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdown();
    }
    return orders / ((System.nanoTime() - start) / 1e9);
  }

  private static PlaceOrderCommand command(String tag, int i) {
    return new PlaceOrderCommand(
        String.format("ob%s-%08d", tag, i),
        "default",
        "u" + (i % 1000),
        List.of(new OrderItem("sku-a", 1), new OrderItem("sku-b", 2)),
        null,
        300,
        900);
  }

  /** Connections whose outbox INSERT does nothing: the placement minus its event, and no more. */
  private static DataSource withoutOutbox(DataSource real) {
    return (DataSource)
        Proxy.newProxyInstance(
            OutboxBench.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, method, args) -> {
              Object result = invoke(real, method, args);
              return result instanceof Connection c ? connection(c) : result;
            });
  }

  private static Connection connection(Connection real) {
    InvocationHandler h =
        (proxy, method, args) -> {
          if (method.getName().equals("prepareStatement")
              && args != null
              && args[0] instanceof String sql
              && sql.startsWith("INSERT INTO outbox")) {
            return noOpStatement();
          }
          return invoke(real, method, args);
        };
    return (Connection)
        Proxy.newProxyInstance(
            OutboxBench.class.getClassLoader(), new Class<?>[] {Connection.class}, h);
  }

  private static PreparedStatement noOpStatement() {
    return (PreparedStatement)
        Proxy.newProxyInstance(
            OutboxBench.class.getClassLoader(),
            new Class<?>[] {PreparedStatement.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "executeBatch" -> new int[0];
                  case "executeUpdate" -> 0;
                  default -> null;
                });
  }

  private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args)
      throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (java.lang.reflect.InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    java.util.Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  private static OtcConfig config(EmbeddedServers servers, String schema, int threads) {
    Map<String, String> env = new HashMap<>();
    env.put("OTC_MYSQL_URL", servers.jdbcUrl(schema));
    env.put("OTC_MYSQL_USER", servers.mysqlUser());
    env.put("OTC_MYSQL_PASSWORD", servers.mysqlPassword());
    env.put("OTC_DB_POOL_SIZE", Integer.toString(threads + 2));
    env.put("OTC_REDIS_URI", servers.redisUri());
    env.put("OTC_KEY_PREFIX", servers.newKeyPrefix("bench-outbox"));
    env.put("OTC_MIGRATE_ON_START", "true");
    return OtcConfig.fromEnvironment(env);
  }

  private static int intArg(String[] args, String name, int fallback) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) {
        return Integer.parseInt(args[i + 1]);
      }
    }
    return fallback;
  }
}
