package io.ordertimeout.testing;

import io.ordertimeout.embedded.wechat.WeChatPaySimulator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * The set-up of tests of the payment and close use cases against WeChat: one WeChat Pay simulator
 * per test class, a fresh {@link TestStack} wired on it per test, whose invariants are checked
 * before it is closed. A subclass says how its stack is built ({@link #newStack()}) and seeds it in
 * its own {@code @BeforeEach}, which JUnit runs after this class's.
 */
public abstract class WeChatStackFixture {
  /** The payer's openid in the tests' prepay calls. */
  public static final String OPEN_ID = "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o";

  /** Each running subclass's simulator: the fast tier runs test classes in parallel. */
  private static final Map<Class<?>, WeChatPaySimulator> SIMULATORS = new ConcurrentHashMap<>();

  /** This class's simulator, set before each test. */
  protected WeChatPaySimulator wechat;

  protected TestStack stack;

  @BeforeAll
  protected static void startWeChat(TestInfo test) {
    SIMULATORS.put(test.getTestClass().orElseThrow(), WeChatPaySimulator.start());
  }

  @AfterAll
  protected static void stopWeChat(TestInfo test) {
    SIMULATORS.remove(test.getTestClass().orElseThrow()).close();
  }

  /** The simulator of {@code testClass}, for its static members (@BeforeAll, method sources). */
  protected static WeChatPaySimulator simulatorOf(Class<? extends WeChatStackFixture> testClass) {
    return SIMULATORS.get(testClass);
  }

  /** The stack each test runs on, e.g. {@code TestStack.withWeChat("pay-svc", wechat)}. */
  protected abstract TestStack newStack();

  @BeforeEach
  protected final void createStack() {
    wechat = SIMULATORS.get(getClass());
    stack = newStack();
  }

  @AfterEach
  protected final void checkInvariantsAndCloseStack() {
    stack.assertInvariants();
    stack.close();
  }
}
