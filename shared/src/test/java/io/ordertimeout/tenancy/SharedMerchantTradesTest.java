package io.ordertimeout.tenancy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.admin.AdminRefusal;
import io.ordertimeout.admin.ForceClose;
import io.ordertimeout.close.CloseResult;
import io.ordertimeout.compensation.CompensationReport;
import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.ClosedOrder;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.OrderRejected;
import io.ordertimeout.domain.PlaceOrderCommand;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.SignedNotification;
import io.ordertimeout.embedded.wechat.TradeState;
import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import io.ordertimeout.payment.NotificationService;
import io.ordertimeout.payment.PaymentMismatchException;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.wechat.GatewaySettings;
import io.ordertimeout.wechat.MerchantCredentials;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.PrepayCommand;
import io.ordertimeout.wechat.StaticMerchantDirectory;
import io.ordertimeout.wechat.WeChatPayGateway;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two tenants on ONE WeChat merchant account, each with an order of the same id: one WeChat trade
 * (mchid, out_trade_no) belongs to exactly one (tenant, order), and no prepay, query, close, refund
 * or notification of one tenant acts on the other's trade.
 */
class SharedMerchantTradesTest {
  private static final String A = "shop-a";
  private static final String B = "shop-b";
  private static final String ID = "wx20261202000001";
  private static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";

  private static WeChatPaySimulator wechat;
  private TestStack stack;

  @BeforeAll
  static void startWeChat() {
    wechat = WeChatPaySimulator.start();
  }

  @AfterAll
  static void stopWeChat() {
    wechat.close();
  }

  @BeforeEach
  void setUp() {
    // forget trades of the previous test: every test uses the same order id
    wechat.forget(List.of(ID, digest(A, ID), digest(B, ID)));
    stack = TestStack.withOverrides("shared-mch", Map.of(), sharedMerchant(wechat));
    for (String tenant : List.of(A, B)) {
      stack.app().tenants().onboard(tenant);
      stack.update(
          "INSERT INTO stock (tenant_id, sku_id, available, total) VALUES (?, 'sku-1', 10, 10)",
          tenant);
    }
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  /** The out_trade_no of an order whose id another order of the merchant holds. */
  static String digest(String tenant, String orderId) {
    try {
      byte[] hash =
          java.security.MessageDigest.getInstance("SHA-256")
              .digest((tenant + "\n" + orderId).getBytes(java.nio.charset.StandardCharsets.UTF_8));
      return java.util.HexFormat.of().formatHex(hash).substring(0, 32);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Both tenants answer with the simulator's one merchant account (one single-merchant secret). */
  static PaymentGateway sharedMerchant(WeChatPaySimulator sim) {
    MerchantCredentials one = TestStack.credentialsFor(sim);
    return new WeChatPayGateway(
        new StaticMerchantDirectory(Map.of(A, one, B, one, "default", one)),
        Clock.systemUTC(),
        GatewaySettings.production()
            .withReadTimeout(Duration.ofSeconds(5))
            .withBaseUrl(sim.baseUrl()));
  }

  private void place(String tenant) {
    stack
        .app()
        .placeOrders()
        .place(
            new PlaceOrderCommand(
                ID, tenant, "u1", List.of(new OrderItem("sku-1", 2)), null, 100, 600));
  }

  private void prepay(String tenant) {
    stack.app().prepays().prepay(tenant, ID, OPEN_ID, null);
  }

  private NotificationService.Result notify(String tenant, SignedNotification n) {
    return stack.app().notifications().handle(tenant, n.headers(), n.body());
  }

  private CloseResult cancel(String tenant) {
    return stack.app().closer().close(tenant, List.of(ID), CloseReason.USER_CANCEL);
  }

  private List<String> rowsOf(String tenant) {
    return stack.dump(
        "SELECT 'order', status, transaction_id, prepay_id IS NOT NULL, NULL FROM orders"
            + " WHERE tenant_id = '"
            + tenant
            + "' UNION ALL SELECT 'stock', sku_id, available, reserved, sold FROM stock"
            + " WHERE tenant_id = '"
            + tenant
            + "' UNION ALL SELECT 'ledger', order_id, sku_id, kind, quantity FROM stock_movements"
            + " WHERE tenant_id = '"
            + tenant
            + "' UNION ALL SELECT 'pac', order_id, transaction_id, refund_status, NULL"
            + " FROM paid_after_close WHERE tenant_id = '"
            + tenant
            + "' ORDER BY 1, 2, 3, 4");
  }

  private String outTradeNoOf(String tenant) {
    return stack
        .dump("SELECT out_trade_no FROM wechat_trades WHERE tenant_id = '" + tenant + "'")
        .get(0)
        .replace("|", "");
  }

  /** A's order is paid; B places the same id, prepays and cancels. */
  @Test
  void anotherTenantsPaidTradeNeitherBlocksNorPaysTheSameOrderId() {
    place(A);
    prepay(A);
    String paidBy = wechat.pay(ID).transactionId();
    assertThat(notify(A, wechat.notification(ID).build()))
        .isEqualTo(NotificationService.Result.APPLIED);
    List<String> aBefore = rowsOf(A);
    place(B);

    prepay(B); // before: 409 PREPAY_REFUSED (WeChat's ORDERPAID for A's trade), prepaid_at kept
    String bTrade = outTradeNoOf(B);
    CloseResult closed = cancel(B);

    assertThat(bTrade).isEqualTo(digest(B, ID));
    assertThat(closed.closed()).extracting(ClosedOrder::orderId).containsExactly(ID);
    assertThat(closed.paid()).isEmpty();
    assertThat(rowsOf(B))
        .containsExactly(
            "ledger|" + ID + "|sku-1|RELEASE|2|",
            "ledger|" + ID + "|sku-1|RESERVE|2|",
            "order|CLOSED|null|1|null|",
            "stock|sku-1|10|0|0|");
    assertThat(rowsOf(A)).isEqualTo(aBefore).contains("order|PAID|" + paidBy + "|1|null|");
    assertThat(wechat.trade(ID).orElseThrow().state()).isEqualTo(TradeState.SUCCESS);
    assertThat(wechat.trade(bTrade).orElseThrow().state()).isEqualTo(TradeState.CLOSED);
    assertThat(stack.app().metrics().counter("close_paid_path_failures")).isZero();
  }

  /** A's order is prepaid, not paid; B's cancel of the same id must not close A's trade. */
  @Test
  void closingOneTenantsOrderLeavesTheOtherTenantsTradePayable() {
    place(A);
    prepay(A);
    place(B);
    prepayQuietly(B);

    CloseResult closed = cancel(B);

    assertThat(closed.closed()).extracting(ClosedOrder::orderId).containsExactly(ID);
    // before: B's close queried and closed trade ID, A's: A's payer then got 409 CLOSED
    assertThat(wechat.trade(ID).orElseThrow().state()).isEqualTo(TradeState.NOTPAY);
    String paidBy = wechat.pay(ID).transactionId();
    assertThat(notify(A, wechat.notification(ID).build()))
        .isEqualTo(NotificationService.Result.APPLIED);
    assertThat(rowsOf(A)).contains("order|PAID|" + paidBy + "|1|null|");
    assertThat(rowsOf(B)).contains("order|CLOSED|null|1|null|", "stock|sku-1|10|0|0|");
  }

  /** A genuine notification of A's trade, replayed into B's URL (same keys, B's own nonces). */
  @Test
  void aNotificationOfOneTenantsTradeReplayedToTheOtherTenantChangesNothing() {
    place(A);
    prepay(A);
    place(B);
    prepayQuietly(B);
    wechat.pay(ID);
    SignedNotification captured = wechat.notification(ID).build();
    List<String> bBefore = rowsOf(B);

    assertThatThrownBy(() -> notify(B, captured))
        .isInstanceOfSatisfying(
            PaymentMismatchException.class,
            e -> assertThat(e.kind()).isEqualTo(PaymentMismatchException.Kind.UNKNOWN_ORDER));

    assertThat(rowsOf(B)).isEqualTo(bBefore).contains("order|UNPAID|null|1|null|");
    assertThat(stack.app().metrics().counter("payment_notifications_unbound")).isEqualTo(1);
    assertThat(notify(A, captured)).isEqualTo(NotificationService.Result.APPLIED);
    assertThat(stack.dump("SELECT status FROM orders WHERE tenant_id = '" + A + "'"))
        .containsExactly("PAID|");
  }

  /** B's order closed after its prepay; A's customer pays A's trade; compensation audits B. */
  @Test
  void compensationNeverRefundsOneTenantsPayerForTheOtherTenantsClosedOrder() {
    place(A);
    prepay(A);
    place(B);
    prepayQuietly(B);
    cancel(B);
    wechat.pay(ID);
    notify(A, wechat.notification(ID).build());
    int refunds = wechat.callCount(Endpoint.REFUND);

    CompensationReport report =
        stack
            .app()
            .newCompensator(CompensationSettings.defaults().withNotifyGrace(Duration.ZERO))
            .run();

    assertThat(report.count("paid_after_close_found")).isZero();
    assertThat(wechat.callCount(Endpoint.REFUND)).isEqualTo(refunds);
    assertThat(wechat.trade(ID).orElseThrow().state()).isEqualTo(TradeState.SUCCESS);
    assertThat(stack.count("SELECT COUNT(*) FROM paid_after_close")).isZero();
    assertThat(stack.dump("SELECT tenant_id, status FROM orders ORDER BY tenant_id"))
        .containsExactly(A + "|PAID|", B + "|CLOSED|");
  }

  /**
   * A trade WeChat refuses outright (a trade of that number this system has no record of is paid):
   * the refused prepay leaves the order unprepaid, so its cancel asks WeChat nothing and closes it.
   */
  @Test
  void aPrepayWeChatRefusesLeavesTheOrderUnprepaidAndItsCancelClosesIt() {
    // a trade of number ID under the merchant that no order here is bound to, paid
    stack
        .app()
        .gateway()
        .prepay(
            A, new PrepayCommand(ID, "elsewhere", 100, OPEN_ID, Instant.now().plusSeconds(600)));
    wechat.pay(ID);
    place(B);

    assertThatThrownBy(() -> prepay(B))
        .isInstanceOfSatisfying(
            OrderRejected.class,
            e -> assertThat(e.code()).isEqualTo(OrderRejected.Code.PREPAY_REFUSED));
    // before: prepaid_at stayed set, and the cancel took A's... the foreign trade's SUCCESS
    assertThat(stack.dump("SELECT prepaid_at IS NULL, prepay_id FROM orders"))
        .containsExactly("1|null|");
    int queries = wechat.callCount(Endpoint.QUERY);
    CloseResult closed = cancel(B);

    assertThat(closed.closed()).extracting(ClosedOrder::orderId).containsExactly(ID);
    assertThat(wechat.callCount(Endpoint.QUERY)).isEqualTo(queries);
    assertThat(rowsOf(B)).contains("order|CLOSED|null|0|null|", "stock|sku-1|10|0|0|");
  }

  /**
   * {@code tenant}'s order as an old prepay left it: prepaid_at set, bound to the bare id without
   * mchid (the migration's row).
   */
  private void prepaidBeforeBindings(String tenant) {
    stack.update("UPDATE orders SET prepaid_at = NOW(3) WHERE tenant_id = ?", tenant);
    stack.update(
        "INSERT INTO wechat_trades (tenant_id, order_id, mchid, out_trade_no) VALUES (?,?,NULL,?)",
        tenant,
        ID,
        ID);
  }

  /** Makes {@code tenant}'s binding the shape the migration gives trades prepaid before it. */
  private void asBeforeBindings(String tenant) {
    stack.update("UPDATE wechat_trades SET mchid = NULL WHERE tenant_id = ?", tenant);
  }

  /**
   * Before bindings, both tenants prepaid the same id under the one merchant: WeChat holds one
   * trade for two orders and which one it is cannot be told, so nothing acts on it for either.
   */
  @Test
  void aTradeTwoTenantsPrepaidBeforeBindingsIsFlaggedNeverActedOn() {
    place(A);
    prepay(A);
    String paidBy = wechat.pay(ID).transactionId();
    notify(A, wechat.notification(ID).build());
    asBeforeBindings(A);
    place(B);
    prepaidBeforeBindings(B);
    int queries = wechat.callCount(Endpoint.QUERY);
    int refunds = wechat.callCount(Endpoint.REFUND);

    CloseResult closed = cancel(B);
    CompensationReport report =
        stack
            .app()
            .newCompensator(CompensationSettings.defaults().withNotifyGrace(Duration.ZERO))
            .run();

    // before: the close queried A's trade, found SUCCESS and failed applying it to B
    assertThat(closed.failed()).containsExactly(ID);
    assertThat(stack.app().metrics().counter("close_trade_unreachable")).isEqualTo(1);
    assertThat(stack.app().metrics().counter("close_paid_path_failures")).isZero();
    assertThat(wechat.callCount(Endpoint.QUERY)).isEqualTo(queries);
    assertThat(wechat.callCount(Endpoint.REFUND)).isEqualTo(refunds);
    assertThat(report.flags())
        .extracting(f -> f.kind() + " " + f.subject() + " " + f.evidence().get("tenantId"))
        .contains("TRADE_UNREACHABLE " + ID + " " + B);
    assertThat(rowsOf(B)).contains("order|UNPAID|null|0|null|");
    assertThat(rowsOf(A)).contains("order|PAID|" + paidBy + "|1|null|");
    assertThat(wechat.trade(ID).orElseThrow().state()).isEqualTo(TradeState.SUCCESS);
  }

  /**
   * The same shared trade, B's order closed with its prepay mark (as an old prepay left it) while
   * A's customer paid the trade: compensation's audit of closed prepaid orders must not take A's
   * payment for B's paid-after-close and refund A's customer.
   */
  @Test
  void compensationNeverRefundsATradeTwoTenantsSharedBeforeBindings() {
    place(A);
    prepay(A);
    String paidBy = wechat.pay(ID).transactionId();
    notify(A, wechat.notification(ID).build());
    asBeforeBindings(A);
    place(B);
    cancel(B); // not prepaid: closed without asking WeChat
    prepaidBeforeBindings(B);
    int refunds = wechat.callCount(Endpoint.REFUND);

    CompensationReport report = stack.app().newCompensator(CompensationSettings.defaults()).run();

    // before: B's paid-after-close recorded with A's transaction, and A's customer refunded
    assertThat(report.count("paid_after_close_found")).isZero();
    assertThat(stack.count("SELECT COUNT(*) FROM paid_after_close")).isZero();
    assertThat(wechat.callCount(Endpoint.REFUND)).isEqualTo(refunds);
    assertThat(wechat.trade(ID).orElseThrow().state()).isEqualTo(TradeState.SUCCESS);
    assertThat(report.flags())
        .extracting(f -> f.kind() + " " + f.subject() + " " + f.evidence().get("tenantId"))
        .containsExactly("TRADE_UNREACHABLE " + ID + " " + B);
    assertThat(rowsOf(A)).contains("order|PAID|" + paidBy + "|1|null|");
  }

  /**
   * A's trade predates bindings; B prepays the same id afterwards: B gets a number of its own, and
   * A's trade stays A's for notifications and closes.
   */
  @Test
  void aTradeOneTenantPrepaidBeforeBindingsStaysThatTenantsOwn() {
    place(A);
    prepay(A);
    asBeforeBindings(A);
    place(B);

    prepayQuietly(B);
    wechat.pay(ID);
    SignedNotification n = wechat.notification(ID).build();

    // before: B's order took A's payment
    assertThatThrownBy(() -> notify(B, n)).isInstanceOf(PaymentMismatchException.class);
    assertThat(outTradeNoOf(B)).isEqualTo(digest(B, ID));
    assertThat(notify(A, n)).isEqualTo(NotificationService.Result.APPLIED);
    assertThat(stack.dump("SELECT tenant_id, status FROM orders ORDER BY tenant_id"))
        .containsExactly(A + "|PAID|", B + "|UNPAID|");
    assertThat(cancel(B).closed()).extracting(ClosedOrder::orderId).containsExactly(ID);
    assertThat(wechat.trade(digest(B, ID)).orElseThrow().state()).isEqualTo(TradeState.CLOSED);
  }

  /**
   * The operator's way out of a shared trade: checked in the merchant platform, the trade is A's,
   * so B's order disowns it. B then closes without a WeChat call, releasing its stock, and A's
   * order, the number's only holder now, is reachable again: its payment applies.
   */
  @Test
  void anOperatorDisownsASharedTradeForTheOrderItIsNotAndBothOrdersEndRight() {
    place(A);
    prepay(A);
    asBeforeBindings(A);
    place(B);
    prepaidBeforeBindings(B);
    assertThat(cancel(B).failed()).containsExactly(ID);
    int calls = wechat.callCount(Endpoint.QUERY) + wechat.callCount(Endpoint.CLOSE);
    ForceClose forceClose = stack.app().adminOps(CompensationSettings.defaults()).forceClose();

    Map<String, Object> answer =
        forceClose.closeDisowningTrade(B, ID, "trade is shop-a's (merchant platform)", "ops");

    assertThat(answer).containsEntry("outcome", "CLOSED").containsEntry("closeReason", "OPERATOR");
    assertThat(wechat.callCount(Endpoint.QUERY) + wechat.callCount(Endpoint.CLOSE))
        .isEqualTo(calls);
    assertThat(rowsOf(B)).contains("order|CLOSED|null|0|null|", "stock|sku-1|10|0|0|");
    assertThat(stack.count("SELECT COUNT(*) FROM wechat_trades WHERE tenant_id = ?", B)).isZero();
    assertThat(
            stack.dump("SELECT action, tenant_id, subject FROM admin_actions ORDER BY action_id"))
        .containsExactly("disown-trade|" + B + "|" + ID + "|", "force-close|" + B + "|" + ID + "|");
    // A's trade is A's alone again
    String paidBy = wechat.pay(ID).transactionId();
    assertThat(notify(A, wechat.notification(ID).build()))
        .isEqualTo(NotificationService.Result.APPLIED);
    assertThat(rowsOf(A)).contains("order|PAID|" + paidBy + "|1|null|");
  }

  /** A trade the close path reaches is never disowned: the plain force-close asks WeChat. */
  @Test
  void disowningAReachableTradeIsRefusedAndChangesNothing() {
    place(A);
    prepay(A);
    List<String> before = rowsOf(A);
    ForceClose forceClose = stack.app().adminOps(CompensationSettings.defaults()).forceClose();

    assertThatThrownBy(() -> forceClose.closeDisowningTrade(A, ID, "mistaken", "ops"))
        .isInstanceOf(AdminRefusal.class)
        .hasMessageContaining("reachable");

    assertThat(rowsOf(A)).isEqualTo(before);
    assertThat(outTradeNoOf(A)).isEqualTo(ID);
    assertThat(stack.count("SELECT COUNT(*) FROM admin_actions")).isZero();
    assertThat(wechat.trade(ID).orElseThrow().state()).isEqualTo(TradeState.NOTPAY);
  }

  /**
   * B's prepay is refused on the old code (the trade is A's); the test goes on to what it checks.
   */
  private void prepayQuietly(String tenant) {
    try {
      prepay(tenant);
    } catch (OrderRejected e) {
      // the old code's answer; the assertions after it show what that led to
    }
  }
}
