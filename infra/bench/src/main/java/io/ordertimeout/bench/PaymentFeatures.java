package io.ordertimeout.bench;

import io.ordertimeout.close.OrderCloser;
import java.lang.reflect.Constructor;

/**
 * Which payment parts of the close path this build has, found by reflection so the bench runs on
 * any branch without stubs: the prepaid share of S1 is only exercised when the close use case takes
 * a payment gateway (query WeChat, then close).
 */
final class PaymentFeatures {
  private PaymentFeatures() {}

  /** True when OrderCloser is wired with a payment port (io.ordertimeout.payment.*). */
  static boolean closeQueriesWeChat() {
    for (Constructor<?> c : OrderCloser.class.getConstructors()) {
      for (Class<?> p : c.getParameterTypes()) {
        if (p.getPackageName().equals("io.ordertimeout.payment")) {
          return true;
        }
      }
    }
    return false;
  }
}
