package io.ordertimeout.payment;

import io.ordertimeout.testing.TestStack;

/**
 * Every PaymentServiceTest case with {@code useAffectedRows=true} in the JDBC URL: an operator's
 * URL option must not change what the row-count checks decide (a paid-after-close case is recorded
 * once).
 */
class PaymentServiceAffectedRowsTest extends PaymentServiceTest {
  @Override
  protected TestStack newStack() {
    return TestStack.withWeChatAndUrlOptions("pay-svc-ar", wechat, "useAffectedRows=true");
  }
}
