package io.ordertimeout.place;

import io.ordertimeout.testing.TestStack;

/**
 * Every CancelAndPlaceOrderServiceTest case with {@code useAffectedRows=true} in the JDBC URL: an
 * operator's URL option must not change what the row-count checks decide.
 */
class CancelAndPlaceOrderServiceAffectedRowsTest extends CancelAndPlaceOrderServiceTest {
  @Override
  TestStack newStack() {
    return TestStack.withUrlOptions("place-cancel-ar", "useAffectedRows=true", null);
  }
}
