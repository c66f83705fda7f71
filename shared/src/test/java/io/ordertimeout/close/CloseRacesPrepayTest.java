package io.ordertimeout.close;

import static io.ordertimeout.testing.Deadlines.expireNow;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.domain.CloseReason;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.embedded.wechat.Endpoint;
import io.ordertimeout.embedded.wechat.TradeState;
import io.ordertimeout.mysql.Tx;
import io.ordertimeout.payment.PrepayService;
import io.ordertimeout.payment.TradeBindings;
import io.ordertimeout.testing.Await;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.testing.WeChatStackFixture;
import io.ordertimeout.wechat.MiniProgramPayment;
import io.ordertimeout.wechat.PaymentGateway;
import io.ordertimeout.wechat.PaymentNotification;
import io.ordertimeout.wechat.PrepayCommand;
import io.ordertimeout.wechat.RefundResult;
import io.ordertimeout.wechat.TradeStatus;
import io.ordertimeout.wechat.WeChatCloseOutcome;
import io.ordertimeout.wechat.WeChatTrade;
import io.ordertimeout.wiring.Components;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A prepay that lands between the closer's WeChat step and its closing transaction. The payer's
 * prepay has marked the order (prepaid_at) but its WeChat call is still in flight, so the closer's
 * query and close find no trade at WeChat; then the prepay creates the trade and stores its
 * prepay_id, and the payer holds payment parameters. The closer must not close that order blind: it
 * closes the new trade at WeChat first (or leaves the order UNPAID), so the payer's money can never
 * land on a CLOSED order.
 *
 * <p>The interleaving is forced, not hoped for: a gateway in front of the simulator holds the
 * prepay's WeChat call until the closer's first close call has answered, and that close call
 * returns only after the prepay has finished.
 */
class CloseRacesPrepayTest extends WeChatStackFixture {
  private ExecutorService threads;

  @Override
  protected TestStack newStack() {
    return TestStack.withWeChat("close-race", wechat);
  }

  @BeforeEach
  void setUp() {
    stack.seedSku("sku-a", 100);
    stack.seedCoupon("cp-1", "u1");
    threads = Executors.newCachedThreadPool();
  }

  @AfterEach
  void tearDown() {
    threads.shutdownNow();
  }

  @Test
  void aCancelWhoseWeChatStepFoundNoTradeDoesNotCloseAnOrderPrepaidMeanwhile() throws Exception {
    raceAndCheck("race-cancel-01", CloseReason.USER_CANCEL);
  }

  /**
   * The same race on the timeout path: WeChat judges time_expire by its own clock, so a trade
   * created just after the database's deadline (clocks a few seconds apart) is still payable there.
   * Moving expire_at behind the database's NOW(3) while the prepay is in flight is that skew.
   */
  @Test
  void aTimeoutWhoseWeChatStepFoundNoTradeDoesNotCloseAnOrderPrepaidMeanwhile() throws Exception {
    raceAndCheck("race-timeout-1", CloseReason.TIMEOUT);
  }

  private void raceAndCheck(String orderId, CloseReason reason) throws Exception {
    stack.place(orderId, "u1", 600, "cp-1", new OrderItem("sku-a", 2));
    Components app = stack.app();
    Interleaving gateway = new Interleaving(app.gateway());
    PrepayService prepays = new PrepayService(new Tx(app.dataSource()), gateway, app.metrics());
    OrderCloser closer =
        new OrderCloser(
            new Tx(app.dataSource()),
            app.timers(),
            app.time(),
            app.metrics(),
            new WeChatCloseStep(
                gateway,
                new TradeBindings(new Tx(app.dataSource()), gateway),
                threads,
                Duration.ofSeconds(10),
                app.metrics()),
            app.payments(),
            app.config().userPayingLimit());
    int closesBefore = wechat.callCount(Endpoint.CLOSE);

    // The payer's prepay: prepaid_at committed, its WeChat call held at the gateway.
    Future<MiniProgramPayment> prepay =
        threads.submit(() -> prepays.prepay(TenantIds.DEFAULT, orderId, OPEN_ID, null));
    awaitPrepayAtWeChat(gateway, prepay);
    if (reason == CloseReason.TIMEOUT) {
      expireNow(stack, orderId);
    }
    // Right after the closer's first WeChat close (no trade yet), the prepay completes.
    gateway.afterFirstClose =
        () -> {
          gateway.releasePrepay.countDown();
          return prepay.get(10, TimeUnit.SECONDS);
        };

    io.ordertimeout.close.CloseResult result =
        closer.close(TenantIds.DEFAULT, List.of(orderId), reason);
    MiniProgramPayment payment = prepay.get(10, TimeUnit.SECONDS);

    // The payer holds payment parameters for a trade WeChat created after the closer's first look.
    assertThat(payment.prepayId()).isEqualTo(wechat.trade(orderId).orElseThrow().prepayId());
    assertThat(stack.dump("SELECT status, prepay_id FROM orders"))
        .containsExactly("CLOSED|" + payment.prepayId() + "|");
    assertThat(wechat.trade(orderId).orElseThrow().state())
        .as("WeChat trade of an order the closer CLOSED in MySQL")
        .isEqualTo(TradeState.CLOSED);
    assertThat(wechat.callCount(Endpoint.CLOSE) - closesBefore)
        .as("close calls: the first found no trade, the second closed the new one")
        .isEqualTo(2);
    assertThat(result.closed())
        .extracting(io.ordertimeout.domain.ClosedOrder::orderId)
        .containsExactly(orderId);
    assertThatThrownBy(() -> wechat.pay(orderId))
        .as("the payer cannot pay a closed order")
        .isInstanceOf(IllegalStateException.class);
    assertThat(stack.count("SELECT COUNT(*) FROM paid_after_close")).isZero();
    assertThat(stack.dump("SELECT status, locked_by_order FROM coupons"))
        .containsExactly("AVAILABLE|null|");
  }

  /** Waits until the prepay is held at WeChat; a prepay that failed before shows its own error. */
  private static void awaitPrepayAtWeChat(Interleaving gateway, Future<MiniProgramPayment> prepay)
      throws Exception {
    Await.await("prepay held at WeChat", Duration.ofSeconds(10))
        .until(
            () -> {
              if (gateway.prepayAtWeChat.getCount() == 0) {
                return true;
              }
              if (prepay.isDone()) {
                prepay.get(); // throws the prepay's failure, e.g. 409 ORDER_EXPIRED
              }
              return false;
            });
  }

  /** The simulator behind the real SDK, with two hooks that force the interleaving. */
  static final class Interleaving implements PaymentGateway {
    final CountDownLatch prepayAtWeChat = new CountDownLatch(1);
    final CountDownLatch releasePrepay = new CountDownLatch(1);
    volatile java.util.concurrent.Callable<?> afterFirstClose = () -> null;
    private final AtomicBoolean closedOnce = new AtomicBoolean();
    private final PaymentGateway real;

    Interleaving(PaymentGateway real) {
      this.real = real;
    }

    @Override
    public MiniProgramPayment prepay(String tenantId, PrepayCommand command) {
      prepayAtWeChat.countDown();
      try {
        if (!releasePrepay.await(10, TimeUnit.SECONDS)) {
          throw new IllegalStateException("prepay of " + command.outTradeNo() + " never released");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      return real.prepay(tenantId, command);
    }

    @Override
    public String merchantId(String tenantId) {
      return real.merchantId(tenantId);
    }

    @Override
    public WeChatCloseOutcome close(String tenantId, WeChatTrade trade) {
      WeChatCloseOutcome answer = real.close(tenantId, trade);
      if (closedOnce.compareAndSet(false, true)) {
        try {
          afterFirstClose.call();
        } catch (Exception e) {
          throw new IllegalStateException("the prepay racing the close of " + trade, e);
        }
      }
      return answer;
    }

    @Override
    public TradeStatus query(String tenantId, WeChatTrade trade) {
      return real.query(tenantId, trade);
    }

    @Override
    public RefundResult refund(
        String tenantId, WeChatTrade trade, String outRefundNo, long amountFen, String reason) {
      return real.refund(tenantId, trade, outRefundNo, amountFen, reason);
    }

    @Override
    public RefundResult queryRefund(String tenantId, String outRefundNo) {
      return real.queryRefund(tenantId, outRefundNo);
    }

    @Override
    public PaymentNotification parseNotification(
        String tenantId, Map<String, String> headers, String body) {
      return real.parseNotification(tenantId, headers, body);
    }
  }
}
