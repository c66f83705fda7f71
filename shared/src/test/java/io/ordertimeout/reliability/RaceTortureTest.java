package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.InvariantChecker;
import io.ordertimeout.payment.PaidTrade;
import io.ordertimeout.payment.PaymentOutcome;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Sweeps, stream consumers, payers, cancellers and a direct closer (9 workers) on the same orders
 * of one hot SKU at once; zero invariant violations over several seeds.
 *
 * <p>By default 5,000 orders x 2 seeds (well under a minute here); the full run is {@code
 * -Dotc.torture.orders=50000 -Dotc.torture.seeds=5}.
 */
@Tag("integration")
class RaceTortureTest {
  static final int ORDERS = Integer.getInteger("otc.torture.orders", 5_000);
  static final int SEEDS = Integer.getInteger("otc.torture.seeds", 2);
  static final String HOT = "sku-hot";

  @Test
  void everyWorkerOnTheSameOrdersAndOneHotSkuBreaksNoInvariant() {
    List<String> report = new ArrayList<>();
    long violations = 0;
    for (int seed = 1; seed <= SEEDS; seed++) {
      try (TestStack stack = TestStack.create("torture" + seed)) {
        String line = tortureOnce(stack, seed);
        List<String> found = new InvariantChecker(stack.app().dataSource()).violations();
        violations += found.size();
        report.add(line + ", violations " + found.size());
        assertThat(found).as("invariant violations, seed " + seed).isEmpty();
        stack.assertInvariants();
      }
    }
    report.forEach(r -> System.out.println("Race torture: " + r));
    assertThat(violations).isZero();
  }

  private String tortureOnce(TestStack stack, int seed) {
    long started = System.nanoTime();
    stack.seedSku(HOT, ORDERS * 3L);
    // Deadlines 1.5 s out: payments and cancels start while the first closes do.
    List<String> ids =
        stack.bulkPlace("s" + seed + "-", ORDERS, Duration.ofMillis(1_500), i -> item(i));
    Map<String, Long> amounts = amounts(stack);
    Map<String, AtomicLong> outcomes = new ConcurrentHashMap<>();
    List<Thread> threads = new ArrayList<>();
    try (Workers closers = new Workers(stack.app(), 2, 2, 3_000)) {
      for (int w = 0; w < 2; w++) {
        Random rnd = new Random(seed * 31L + w);
        threads.add(worker(() -> pay(stack, ids, amounts, rnd, outcomes)));
      }
      for (int w = 0; w < 2; w++) {
        Random rnd = new Random(seed * 37L + w);
        threads.add(worker(() -> cancel(stack, ids, rnd, outcomes)));
      }
      Random rnd = new Random(seed * 41L);
      threads.add(worker(() -> closeDirect(stack, ids, rnd, outcomes)));
      Await.reached(
          Await.await("every order final, seed " + seed, Duration.ofSeconds(120))
              .pollInterval(Duration.ofMillis(200)),
          () -> unpaid(stack) == 0);
      threads.forEach(Thread::interrupt);
      join(threads);
    }
    assertThat(unpaid(stack)).as("orders left UNPAID, seed " + seed).isZero();
    return String.format(
        "seed %d: %d orders on one SKU, 9 workers (2 sweeps, 2 consumers, 2 payers, 2 cancellers,"
            + " 1 closer), %d s; PAID %d, CLOSED TIMEOUT %d, CLOSED USER_CANCEL %d,"
            + " paid-after-close %d; worker outcomes %s",
        seed,
        ORDERS,
        (System.nanoTime() - started) / 1_000_000_000,
        stack.count("SELECT COUNT(*) FROM orders WHERE status = 'PAID'"),
        stack.count("SELECT COUNT(*) FROM orders WHERE close_reason = 'TIMEOUT'"),
        stack.count("SELECT COUNT(*) FROM orders WHERE close_reason = 'USER_CANCEL'"),
        stack.count("SELECT COUNT(*) FROM paid_after_close"),
        new java.util.TreeMap<>(outcomes));
  }

  private static OrderItem item(int i) {
    return new OrderItem(HOT, 1 + i % 3);
  }

  private static Map<String, Long> amounts(TestStack stack) {
    Map<String, Long> out = new ConcurrentHashMap<>();
    stack
        .dump("SELECT order_id, amount_fen FROM orders")
        .forEach(
            row -> {
              String[] f = row.split("\\|");
              out.put(f[0], Long.parseLong(f[1]));
            });
    return out;
  }

  /** Payments of random orders (some closed already: paid-after-close), each sent twice. */
  private static void pay(
      TestStack stack,
      List<String> ids,
      Map<String, Long> amounts,
      Random rnd,
      Map<String, AtomicLong> outcomes) {
    String id = ids.get(rnd.nextInt(ids.size()));
    PaidTrade trade =
        new PaidTrade("default", id, "tx-" + id, amounts.get(id), null, PaidTrade.Source.NOTIFY);
    for (int copy = 0; copy < 2; copy++) {
      PaymentOutcome outcome = stack.app().payments().apply(trade);
      bump(outcomes, "pay " + outcome);
    }
  }

  /** Half through the cancel request (the stream), half closing at once as the consumer would. */
  private static void cancel(
      TestStack stack, List<String> ids, Random rnd, Map<String, AtomicLong> outcomes) {
    String id = ids.get(rnd.nextInt(ids.size()));
    if (rnd.nextBoolean()) {
      stack.app().cancels().request(TenantIds.DEFAULT, id);
      bump(outcomes, "cancel requested");
    } else {
      int closed =
          stack
              .app()
              .closer()
              .close(TenantIds.DEFAULT, List.of(id), CloseReason.USER_CANCEL)
              .closed()
              .size();
      bump(outcomes, "cancel closed " + closed);
    }
  }

  /** A closer given random batches of 50, due or not (it must close only the due ones). */
  private static void closeDirect(
      TestStack stack, List<String> ids, Random rnd, Map<String, AtomicLong> outcomes) {
    List<String> batch = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      batch.add(ids.get(rnd.nextInt(ids.size())));
    }
    int closed =
        stack.app().closer().close(TenantIds.DEFAULT, batch, CloseReason.TIMEOUT).closed().size();
    bump(outcomes, "direct closes", closed);
  }

  private static void bump(Map<String, AtomicLong> outcomes, String key) {
    bump(outcomes, key, 1);
  }

  private static void bump(Map<String, AtomicLong> outcomes, String key, long n) {
    outcomes.computeIfAbsent(key, k -> new AtomicLong()).addAndGet(n);
  }

  private static Thread worker(Runnable op) {
    Thread t =
        new Thread(
            () -> {
              while (!Thread.currentThread().isInterrupted()) {
                try {
                  op.run();
                } catch (io.ordertimeout.domain.OrderRejected expected) {
                  // ORDER_PAID (409): a cancel of a PAID order
                } catch (RuntimeException e) {
                  if (Thread.currentThread().isInterrupted()) {
                    return;
                  }
                  throw e;
                }
              }
            },
            "torture");
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static void join(List<Thread> threads) {
    for (Thread t : threads) {
      try {
        t.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static long unpaid(TestStack stack) {
    return stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'");
  }
}
