package io.ordertimeout.testing;

import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The set-up of tests of the payment and close use cases against WeChat: one WeChat Pay simulator
 * per test class, a fresh {@link TestStack} wired on it per test, whose invariants are checked
 * before it is closed. A subclass says how its stack is built ({@link #newStack()}) and seeds it in
 * its own {@code @BeforeEach}, which JUnit runs after this class's.
 */
public abstract class WeChatStackFixture {
  /** The payer's openid in the tests' prepay calls. */
  public static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";

  protected static WeChatPaySimulator wechat;
  protected TestStack stack;

  @BeforeAll
  protected static void startWeChat() {
    wechat = WeChatPaySimulator.start();
  }

  @AfterAll
  protected static void stopWeChat() {
    wechat.close();
  }

  /** The stack each test runs on, e.g. {@code TestStack.withWeChat("pay-svc", wechat)}. */
  protected abstract TestStack newStack();

  @BeforeEach
  protected final void createStack() {
    stack = newStack();
  }

  @AfterEach
  protected final void checkInvariantsAndCloseStack() {
    stack.assertInvariants();
    stack.close();
  }
}
