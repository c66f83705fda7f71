package io.ordertimeout.embedded;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives tests the JVM's {@link EmbeddedServers}:
 * {@code @ExtendWith(EmbeddedServersExtension.class)}, then take an {@code EmbeddedServers servers}
 * parameter in the constructor, a lifecycle method or a test method.
 *
 * <p>The servers themselves start lazily on first use and stop in a JVM shutdown hook, not after
 * the test class: starting MariaDB costs seconds, so every test class in the JVM shares one pair.
 */
public final class EmbeddedServersExtension implements BeforeAllCallback, ParameterResolver {

  /**
   * Creates the instance (and its shutdown hook) before any test runs, so a bad environment fails
   * early.
   */
  @Override
  public void beforeAll(ExtensionContext context) {
    EmbeddedServers.get();
  }

  @Override
  public boolean supportsParameter(
      ParameterContext parameterContext, ExtensionContext extensionContext) {
    return parameterContext.getParameter().getType() == EmbeddedServers.class;
  }

  @Override
  public Object resolveParameter(
      ParameterContext parameterContext, ExtensionContext extensionContext) {
    return EmbeddedServers.get();
  }
}
