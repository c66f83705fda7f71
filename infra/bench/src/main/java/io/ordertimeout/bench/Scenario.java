package io.ordertimeout.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * One benchmark scenario: how many orders, over which SKUs, with which deadlines (offsets from the
 * scenario's base time, negative = already overdue) and which share is paid or prepaid.
 */
record Scenario(
    String name,
    String title,
    int orders,
    int skus,
    double zipfExponent,
    long firstDueMillis,
    long spreadMillis,
    double paidShare,
    double prepaidShare) {

  /** What happens to an order besides its timeout. */
  enum Fate {
    ABANDONED,
    PAID,
    PREPAID
  }

  /** One generated order: id, SKU line, deadline offset, fate, and when it is paid (offset). */
  record Order(
      String id,
      String skuId,
      int quantity,
      long dueOffsetMillis,
      Fate fate,
      long payOffsetMillis) {}

  /**
   * The bench's three scenarios, S1 to S3. {@code scale} multiplies the order counts; {@code
   * timeScale} the spread of deadlines (S1's 60 s, S3's minute of backlog), so a test can run all
   * of them in seconds.
   */
  static List<Scenario> all(double scale, double timeScale) {
    return List.of(
        new Scenario(
            "S1",
            "steady: deadlines spread over 60 s, 20% paid, 10% prepaid, 1,000 SKUs Zipf",
            scaled(200_000, scale),
            1_000,
            1.0,
            0,
            Math.round(60_000 * timeScale),
            0.20,
            0.10),
        new Scenario(
            "S2",
            "flash sale: one SKU, all deadlines in the same second",
            scaled(50_000, scale),
            1,
            0,
            0,
            1_000,
            0,
            0),
        new Scenario(
            "S3",
            "backlog: all overdue at start (deadlines spread over the minute before)",
            scaled(100_000, scale),
            1_000,
            1.0,
            -Math.round(61_000 * timeScale),
            Math.round(60_000 * timeScale),
            0,
            0));
  }

  /** A copy with another order count (tests run every scenario at a few hundred orders). */
  Scenario withOrders(int count) {
    return new Scenario(
        name,
        title,
        count,
        skus,
        zipfExponent,
        firstDueMillis,
        spreadMillis,
        paidShare,
        prepaidShare);
  }

  private static int scaled(int orders, double scale) {
    return Math.max(1, (int) Math.round(orders * scale));
  }

  /** The orders, deterministic for a scenario (seed 42): evenly spaced deadlines, Zipf SKUs. */
  List<Order> generate() {
    Random rng = new Random(42);
    double[] cumulative = zipfCumulative(skus, zipfExponent);
    List<Order> list = new ArrayList<>(orders);
    for (int i = 0; i < orders; i++) {
      long due = firstDueMillis + spreadMillis * i / Math.max(1, orders);
      double u = rng.nextDouble();
      Fate fate =
          u < paidShare ? Fate.PAID : u < paidShare + prepaidShare ? Fate.PREPAID : Fate.ABANDONED;
      // Paid 50 ms to 3 s before the deadline, never before the scenario starts.
      long payAt = Math.max(0, due - 50 - rng.nextInt(2_950));
      list.add(
          new Order(
              String.format("%s-%07d", name.toLowerCase(), i),
              "sku-" + sample(cumulative, rng.nextDouble()),
              1 + rng.nextInt(3),
              due,
              fate,
              payAt));
    }
    return list;
  }

  private static double[] zipfCumulative(int n, double exponent) {
    double[] c = new double[n];
    double sum = 0;
    for (int k = 0; k < n; k++) {
      sum += 1.0 / Math.pow(k + 1, exponent);
      c[k] = sum;
    }
    for (int k = 0; k < n; k++) {
      c[k] /= sum;
    }
    return c;
  }

  private static int sample(double[] cumulative, double u) {
    int lo = 0;
    int hi = cumulative.length - 1;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (cumulative[mid] < u) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
}
