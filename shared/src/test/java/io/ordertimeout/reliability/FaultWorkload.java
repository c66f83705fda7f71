package io.ordertimeout.reliability;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.InvariantChecker;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.mysql.DbTime;
import io.ordertimeout.testing.TestStack;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The mixed workload of one fault scenario: orders placed through the real use case, a quarter each
 * paid (prepaid, then paid at the WeChat simulator, which notifies the webhook), cancelled by the
 * user, abandoned before prepay and abandoned after prepay; then the expected final state of each.
 */
final class FaultWorkload {
  static final String SKU = "sku-hot";
  static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";

  enum Role {
    PAY,
    CANCEL,
    ABANDON,
    ABANDON_PREPAID
  }

  private final TestStack stack;
  private final WeChatPaySimulator wechat;
  private final Map<String, Role> roles = new LinkedHashMap<>();
  private long cancelRetries;

  FaultWorkload(TestStack stack, WeChatPaySimulator wechat) {
    this(stack, wechat, true);
  }

  /**
   * {@code seedSku} false: another workload of the same stack seeded the SKU (the soak's rounds).
   */
  FaultWorkload(TestStack stack, WeChatPaySimulator wechat, boolean seedSku) {
    this.stack = stack;
    this.wechat = wechat;
    if (seedSku) {
      stack.seedSku(SKU, 1_000_000);
    }
  }

  /**
   * Places {@code count} orders; cancelled and paying ones get 120 s (they must end USER_CANCEL or
   * PAID, never time out during a test: on a loaded 2-core machine placing and prepaying 40 orders
   * took longer than a 4 s deadline, and the simulator then refused the payment as past its
   * time_expire), the abandoned ones {@code deadlineSeconds}.
   */
  void place(String tag, int count, int deadlineSeconds) {
    for (int i = 0; i < count; i++) {
      Role role = Role.values()[i % Role.values().length];
      String id = tag + "-" + role.name().toLowerCase(java.util.Locale.ROOT) + "-" + i;
      int deadline = role == Role.CANCEL || role == Role.PAY ? 120 : deadlineSeconds;
      stack.place(id, "u" + i, deadline, null, new OrderItem(SKU, 1 + i % 3));
      if (role == Role.PAY || role == Role.ABANDON_PREPAID) {
        stack.app().prepays().prepay(TenantIds.DEFAULT, id, OPEN_ID, null);
      }
      roles.put(id, role);
    }
  }

  List<String> ids(Role role) {
    return roles.entrySet().stream()
        .filter(e -> e.getValue() == role)
        .map(Map.Entry::getKey)
        .toList();
  }

  int size() {
    return roles.size();
  }

  /** Pays the PAY orders at WeChat (notifications go out) and asks to cancel the CANCEL ones. */
  void payAndCancel(long shuffleSeed) {
    wechat.payShuffled(ids(Role.PAY), shuffleSeed);
    ids(Role.CANCEL).forEach(this::requestCancel);
  }

  /** A client whose cancel failed (503) or whose order still shows UNPAID asks again. */
  void retryCancels() {
    for (String id : ids(Role.CANCEL)) {
      if (statusOf(id).equals("UNPAID")) {
        cancelRetries++;
        requestCancel(id);
      }
    }
  }

  long cancelRetries() {
    return cancelRetries;
  }

  private void requestCancel(String id) {
    try {
      stack.app().cancels().request(TenantIds.DEFAULT, id);
    } catch (RuntimeException redisOrDbDown) {
      // the API answers 503; the client retries (retryCancels)
    }
  }

  String statusOf(String id) {
    return stack.app().orders().find(TenantIds.DEFAULT, id).orElseThrow().status().name();
  }

  long unpaid() {
    return stack.count("SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'");
  }

  /**
   * The one step of compensation these tests need, run on their own schedule: re-schedules every
   * UNPAID order's timer from MySQL's expire_at, as compensation does for timers lost with Redis
   * (the full pass is CompensatorTest's). Answers how many it scheduled.
   */
  static int rescheduleUnpaidFromMySql(TestStack stack) {
    Map<String, Long> deadlines =
        stack.sql(
            c -> {
              Map<String, Long> out = new LinkedHashMap<>();
              try (PreparedStatement ps =
                      c.prepareStatement(
                          "SELECT order_id, expire_at FROM orders WHERE status = 'UNPAID'");
                  ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                  out.put(rs.getString("order_id"), DbTime.instant(rs, "expire_at").toEpochMilli());
                }
              }
              return out;
            });
    if (!deadlines.isEmpty()) {
      stack.app().timers().scheduleAll(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, deadlines);
    }
    return deadlines.size();
  }

  /**
   * What a fault scenario ended with, for its test to assert that every order is in its right final
   * state (paid ones PAID, cancelled ones CLOSED USER_CANCEL, abandoned ones CLOSED TIMEOUT) and
   * not closed before its deadline, and the invariants of docs/concepts/design.md hold: {@code
   * lost} are orders still UNPAID (all are due, paid or cancelled by then), {@code
   * wrongFinalStates} those final in the wrong state.
   */
  record Outcome(
      List<String> lost,
      List<String> wrongFinalStates,
      long closedEarly,
      long paidAfterClose,
      List<String> invariantViolations) {}

  Outcome outcome() {
    List<String> lost = new ArrayList<>();
    List<String> wrong = new ArrayList<>();
    for (Map.Entry<String, Role> e : roles.entrySet()) {
      String expected =
          switch (e.getValue()) {
            case PAY -> "PAID|null";
            case CANCEL -> "CLOSED|USER_CANCEL";
            case ABANDON, ABANDON_PREPAID -> "CLOSED|TIMEOUT";
          };
      String actual =
          stack
              .dump("SELECT status, close_reason FROM orders WHERE order_id = '" + e.getKey() + "'")
              .get(0);
      if (actual.startsWith("UNPAID|")) {
        lost.add(e.getKey() + " (" + e.getValue() + ") is still UNPAID");
      } else if (!actual.equals(expected + "|")) {
        wrong.add(e.getKey() + " is " + actual + " expected " + expected);
      }
    }
    return new Outcome(
        lost,
        wrong,
        closedEarly(),
        stack.count("SELECT COUNT(*) FROM paid_after_close"),
        new InvariantChecker(stack.app().dataSource())
            .violations().stream().map(String::valueOf).toList());
  }

  long closedEarly() {
    return stack.count(
        "SELECT COUNT(*) FROM orders WHERE close_reason = 'TIMEOUT' AND closed_at < expire_at");
  }

  long count(String status, String reason) {
    return reason == null
        ? stack.count("SELECT COUNT(*) FROM orders WHERE status = ?", status)
        : stack.count(
            "SELECT COUNT(*) FROM orders WHERE status = ? AND close_reason = ?", status, reason);
  }
}
