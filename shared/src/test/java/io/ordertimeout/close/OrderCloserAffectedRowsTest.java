package io.ordertimeout.close;

import io.ordertimeout.testing.TestStack;

/**
 * Every OrderCloserTest case with {@code useAffectedRows=true} in the JDBC URL: an operator's URL
 * option must not change what the row-count checks decide.
 */
class OrderCloserAffectedRowsTest extends OrderCloserTest {
  @Override
  TestStack newStack() {
    return TestStack.withUrlOptions("closer-ar", "useAffectedRows=true", null);
  }
}
