package io.ordertimeout.wiring;

import io.ordertimeout.close.CloseResult;
import io.ordertimeout.close.OrderCloser;
import io.ordertimeout.close.WeChatCloseStep;
import io.ordertimeout.mysql.Statements;
import io.ordertimeout.outbox.Outbox;
import io.ordertimeout.payment.PaymentService;
import io.ordertimeout.redis.TimerIndex;
import io.ordertimeout.stream.EventType;
import io.ordertimeout.stream.OrderEvent;
import io.ordertimeout.util.Json;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What SnapStart's beforeCheckpoint runs once so that the snapshot holds the hot paths loaded and
 * warm: the JSON mapping of every event type and of an order request, the read-only SQL and Redis
 * paths, and the classes of the close path. On Lambda a restored environment otherwise pays for
 * class loading, static initialisers and Jackson's serializer caches on its first request (AWS's
 * guidance for Java SnapStart functions: prime in beforeCheckpoint).
 *
 * <p>Nothing here writes: the reads are of an order and a coupon no tenant can have (tenant ids are
 * {@code [0-9A-Za-z_-]}, this one has a dot), the Redis command is TIME, and the close path is only
 * loaded, not run (a close of an unknown order would still ack a timer and count a metric). The
 * priming test checks every table and key is unchanged.
 *
 * <p>The system property {@code otc.snapstart.prime=false} turns it off.
 */
public final class Priming {
  static final String TENANT = "snapstart.prime";
  static final String ORDER = "snapstart-prime-0";

  /** The classes of the close path and what it calls, loaded and initialised. */
  private static final List<Class<?>> CLOSE_PATH =
      List.of(
          OrderCloser.class,
          CloseResult.class,
          WeChatCloseStep.class,
          PaymentService.class,
          Outbox.class,
          Statements.class,
          TimerIndex.class);

  private Priming() {}

  /** Whether priming is on (the default). */
  public static boolean enabled() {
    return !"false".equalsIgnoreCase(System.getProperty("otc.snapstart.prime"));
  }

  /** Runs the read-only hot paths once, unless turned off. */
  public static void prime(Components app) {
    if (!enabled()) {
      return;
    }
    json(app);
    reads(app);
    loadClasses();
  }

  private static void json(Components app) {
    for (EventType type : EventType.values()) {
      OrderEvent event = OrderEvent.of(type, ORDER, "default", 0).with("reason", "TIMEOUT");
      OrderEvent.parse(event.toJson());
    }
    byte[] body =
        ("{\"orderId\":\""
                + ORDER
                + "\",\"userId\":\"u1\",\"amountFen\":100,"
                + "\"items\":[{\"skuId\":\"sku-1\",\"quantity\":1}]}")
            .getBytes(StandardCharsets.UTF_8);
    try {
      app.placeOrderRequests().parse(body);
    } catch (RuntimeException refused) {
      // a body the rules refuse primes the same parser and the error path
    }
    Json.write(Json.object().put("orderId", ORDER).put("status", "UNPAID"));
    Json.error("NOT_FOUND", "order " + ORDER + " does not exist");
  }

  private static void reads(Components app) {
    app.orders().find(TENANT, ORDER);
    app.coupons().find(TENANT, ORDER);
    app.time().nowMillis();
  }

  private static void loadClasses() {
    ClassLoader loader = Priming.class.getClassLoader();
    for (Class<?> top : CLOSE_PATH) {
      load(top, loader);
    }
  }

  private static void load(Class<?> type, ClassLoader loader) {
    try {
      Class.forName(type.getName(), true, loader);
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("cannot load " + type.getName(), e);
    }
    for (Class<?> nested : type.getDeclaredClasses()) {
      load(nested, loader);
    }
  }
}
