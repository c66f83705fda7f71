package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.close.WeChatCloseStep;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.payment.PaymentService;
import io.ordertimeout.place.PlaceOrderService;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.wiring.Components;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every writer takes its row locks in one order (orders, the orders' own rows, coupons, stock; ids
 * ascending within a table), so the closer, placements and payments that share coupons and SKUs
 * never deadlock.
 *
 * <p>Each user cancels an order and at once re-orders with the same coupon and SKUs, retrying while
 * the closer still holds the coupon: the placement then asks for the coupon exactly while the
 * closer's transaction holds it and goes on to the stock rows, which is where a placement that
 * reserved stock before locking its coupon deadlocked with the closer. Every fourth order is paid
 * instead (its coupon is then USED and the user moves to the next), every eighth of those is also
 * cancelled, so payments and paid-after-close race the closer on the same rows. Deadlocks and lock
 * wait timeouts are counted on the statements themselves (Tx retries them, hiding them from its
 * callers), and must be zero.
 */
@Tag("integration")
class LockOrderTest {
  static final int USERS = 6;
  static final int ORDERS_PER_USER = Integer.getInteger("otc.lockorder.orders", 60);
  static final List<String> SKUS = List.of("sku-a", "sku-b", "sku-c");

  /** Bounds the run whatever happens: at most this long of placing. */
  static final Duration RUN_LIMIT = Duration.ofSeconds(90);

  @Test
  void theCloserPlacementsAndPaymentsSharingCouponsAndSkusNeverDeadlock() throws Exception {
    try (TestStack stack = TestStack.create("lock-order")) {
      Run run = new Run(stack);
      long serverDeadlocksBefore = serverDeadlocks(stack);

      run.hammer();

      long serverDeadlocks = serverDeadlocks(stack) - serverDeadlocksBefore;
      String report = run.report(serverDeadlocks);
      System.out.println("Lock order: " + report);
      assertThat(run.conflicts.deadlocks()).as("deadlocks (error 1213); " + report).isZero();
      assertThat(run.conflicts.lockWaitTimeouts())
          .as("lock wait timeouts (error 1205); " + report)
          .isZero();
      assertThat(run.errors).as("worker errors; " + report).isEmpty();
      assertThat(stack.count("SELECT COUNT(*) FROM orders")).isEqualTo(USERS * ORDERS_PER_USER);
      assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'")).isZero();
      assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'")).isPositive();
      assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'PAID'")).isPositive();
      assertThat(run.couponWaits.get())
          .as("re-orders that found their coupon still locked")
          .isPositive();
      stack.assertInvariants();
    }
  }

  /** One hammering: the wiring on a counting DataSource, the queues between workers, outcomes. */
  private static final class Run {
    final LockConflicts conflicts = new LockConflicts();
    final Queue<String> toClose = new ConcurrentLinkedQueue<>();
    final Queue<String> toPay = new ConcurrentLinkedQueue<>();
    final List<Throwable> errors = new CopyOnWriteArrayList<>();
    final AtomicLong couponWaits = new AtomicLong();
    final Map<String, AtomicLong> outcomes = new ConcurrentHashMap<>();
    final PlaceOrderService places;
    final PaymentService payments;
    final OrderCloser closer;
    final TestStack stack;
    volatile boolean placing = true;

    Run(TestStack stack) {
      this.stack = stack;
      Components app = stack.app();
      Tx tx = new Tx(conflicts.wrap(app.dataSource()));
      places = new PlaceOrderService(tx, app.timers(), app.metrics());
      payments = new PaymentService(tx, app.timers(), app.metrics(), null);
      // No order is ever prepaid here: the WeChat step is never asked.
      closer =
          new OrderCloser(
              tx,
              app.timers(),
              app.time(),
              app.metrics(),
              new WeChatCloseStep(null, null, null, Duration.ofSeconds(1), app.metrics()),
              payments,
              app.config().userPayingLimit());
      SKUS.forEach(sku -> stack.seedSku(sku, 1_000_000));
      for (int u = 0; u < USERS; u++) {
        for (int k = 0; k <= ORDERS_PER_USER / 4; k++) {
          stack.seedCoupon(coupon(u, k), user(u));
        }
      }
    }

    void hammer() throws InterruptedException {
      ExecutorService workers = Executors.newFixedThreadPool(USERS + 4);
      List<java.util.concurrent.Future<?>> placers = new ArrayList<>();
      for (int u = 0; u < USERS; u++) {
        int user = u;
        placers.add(workers.submit(() -> guarded(() -> placeAll(user))));
      }
      for (int w = 0; w < 2; w++) {
        workers.submit(() -> guarded(this::closeLoop));
        workers.submit(() -> guarded(this::payLoop));
      }
      for (java.util.concurrent.Future<?> placer : placers) {
        try {
          placer.get(RUN_LIMIT.toSeconds() + 30, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException
            | java.util.concurrent.TimeoutException e) {
          errors.add(e);
        }
      }
      placing = false;
      workers.shutdown();
      assertThat(workers.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
      // Whatever a failed worker left UNPAID: closed here, outside the count's interest.
      List<String> left =
          stack.dump("SELECT order_id FROM orders WHERE status = 'UNPAID'").stream()
              .map(row -> row.substring(0, row.length() - 1))
              .toList();
      if (!left.isEmpty()) {
        closer.close(TenantIds.DEFAULT, left, CloseReason.USER_CANCEL);
      }
    }

    /** One user's orders, one after the other, each re-using the coupon of a cancelled one. */
    private void placeAll(int user) {
      long until = System.nanoTime() + RUN_LIMIT.toNanos();
      int couponIndex = 0;
      for (int i = 0; i < ORDERS_PER_USER && System.nanoTime() < until; i++) {
        String orderId = String.format("u%d-%04d", user, i);
        String couponId = coupon(user, couponIndex);
        PlaceOrderCommand cmd =
            new PlaceOrderCommand(
                orderId,
                "default",
                user(user),
                List.of(
                    new OrderItem(SKUS.get((user + i) % SKUS.size()), 1),
                    new OrderItem(SKUS.get((user + i + 1) % SKUS.size()), 1)),
                couponId,
                100,
                600);
        while (!placeOnce(cmd) && System.nanoTime() < until) {
          couponWaits.incrementAndGet();
          Thread.onSpinWait(); // ask again at once: the closer is committing right now
        }
        if (i % 4 == 3) {
          couponIndex++; // a paid order uses its coupon up
          toPay.add(orderId);
          if (i % 8 == 7) {
            toClose.add(orderId); // and a cancel races that payment
          }
        } else {
          toClose.add(orderId);
        }
      }
    }

    /** True when placed; false when the coupon is still held by the order being closed. */
    private boolean placeOnce(PlaceOrderCommand cmd) {
      try {
        places.place(cmd);
        bump("placed");
        return true;
      } catch (OrderRejected e) {
        if (e.code() == OrderRejected.Code.COUPON_NOT_AVAILABLE) {
          return false;
        }
        throw e;
      }
    }

    private void closeLoop() {
      while (placing || !toClose.isEmpty()) {
        List<String> batch = new ArrayList<>();
        for (String id; batch.size() < 500 && (id = toClose.poll()) != null; ) {
          batch.add(id);
        }
        if (batch.isEmpty()) {
          LockSupport.parkNanos(200_000);
          continue;
        }
        bump(
            "closed",
            closer.close(TenantIds.DEFAULT, batch, CloseReason.USER_CANCEL).closed().size());
      }
    }

    private void payLoop() {
      while (placing || !toPay.isEmpty()) {
        String id = toPay.poll();
        if (id == null) {
          LockSupport.parkNanos(200_000);
          continue;
        }
        PaidTrade trade =
            new PaidTrade("default", id, "tx-" + id, 100, null, PaidTrade.Source.NOTIFY);
        bump("pay " + payments.apply(trade));
      }
    }

    private void guarded(Runnable work) {
      try {
        work.run();
      } catch (RuntimeException | AssertionError e) {
        errors.add(e);
      }
    }

    private void bump(String key) {
      bump(key, 1);
    }

    private void bump(String key, long n) {
      outcomes.computeIfAbsent(key, k -> new AtomicLong()).addAndGet(n);
    }

    String report(long serverDeadlocks) {
      return String.format(
          "%d users x %d orders on %d SKUs; deadlocks %d (server counter %s), lock wait timeouts"
              + " %d, coupon re-asks %d, errors %d; outcomes %s",
          USERS,
          ORDERS_PER_USER,
          SKUS.size(),
          conflicts.deadlocks(),
          serverDeadlocks < 0 ? "n/a" : serverDeadlocks,
          conflicts.lockWaitTimeouts(),
          couponWaits.get(),
          errors.size(),
          new TreeMap<>(outcomes));
    }
  }

  private static String user(int u) {
    return "user-" + u;
  }

  private static String coupon(int u, int k) {
    return String.format("cp-%d-%03d", u, k);
  }

  /**
   * The server's own deadlock count (MariaDB's Innodb_deadlocks), for the report: on a shared
   * external server it counts other clients too, so the assertion uses the statements' own count.
   */
  private static long serverDeadlocks(TestStack stack) {
    return stack.sql(
        c -> {
          try (Statement st = c.createStatement();
              ResultSet rs = st.executeQuery("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'")) {
            return rs.next() ? rs.getLong(2) : -1L;
          } catch (SQLException e) {
            return -1L;
          }
        });
  }
}
