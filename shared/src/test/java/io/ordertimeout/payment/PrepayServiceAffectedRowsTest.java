package io.ordertimeout.payment;

import io.ordertimeout.testing.TestStack;

/**
 * Every PrepayServiceTest case with {@code useAffectedRows=true} in the JDBC URL: an operator's URL
 * option must not change what the row-count checks decide (a repeated prepay of the same order
 * answers the same prepay_id).
 */
class PrepayServiceAffectedRowsTest extends PrepayServiceTest {
  @Override
  protected TestStack newStack() {
    return TestStack.withWeChatAndUrlOptions("prepay-svc-ar", wechat, "useAffectedRows=true");
  }
}
