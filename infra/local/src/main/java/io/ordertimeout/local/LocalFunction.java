package io.ordertimeout.local;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import io.ordertimeout.OrderTimeout;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A function of template.yaml with its real handler instance, loaded by the template's Handler
 * string and built through its {@code (OrderTimeout)} constructor, so every handler shares the
 * local stack's clients instead of reading Lambda's environment.
 */
final class LocalFunction {
  private static final Logger log = LoggerFactory.getLogger(LocalFunction.class);

  private final SamTemplate.Function template;
  private final RequestHandler<Object, Object> handler;

  private LocalFunction(SamTemplate.Function template, RequestHandler<Object, Object> handler) {
    this.template = template;
    this.handler = handler;
  }

  /**
   * The function's handler, or empty (with a warning naming the function and class) when its class
   * is not on the classpath, e.g. a function whose module is not built in this branch.
   */
  static Optional<LocalFunction> load(SamTemplate.Function function, OrderTimeout app) {
    Class<?> type;
    try {
      type = Class.forName(function.handlerClass());
    } catch (ClassNotFoundException e) {
      log.warn(
          "skipping {}: handler class {} is not on the classpath (is its module built and a"
              + " dependency of infra/local?); its routes answer 501 and its schedules do not run",
          function.logicalId(),
          function.handlerClass());
      return Optional.empty();
    }
    if (!RequestHandler.class.isAssignableFrom(type)) {
      throw new IllegalStateException(
          function.logicalId() + ": " + type.getName() + " does not implement RequestHandler");
    }
    return Optional.of(new LocalFunction(function, instantiate(function, type, app)));
  }

  @SuppressWarnings("unchecked")
  private static RequestHandler<Object, Object> instantiate(
      SamTemplate.Function function, Class<?> type, OrderTimeout app) {
    Constructor<?> constructor;
    try {
      constructor = type.getConstructor(OrderTimeout.class);
    } catch (NoSuchMethodException e) {
      throw new IllegalStateException(
          function.logicalId()
              + ": "
              + type.getName()
              + " has no public (OrderTimeout) constructor; the local runner needs one to share its"
              + " clients (the no-argument one reads Lambda's environment)",
          e);
    }
    try {
      return (RequestHandler<Object, Object>) constructor.newInstance(app);
    } catch (InvocationTargetException e) {
      throw new IllegalStateException(
          function.logicalId() + ": " + type.getName() + " failed to start", e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(
          function.logicalId() + ": could not instantiate " + type.getName(), e);
    }
  }

  SamTemplate.Function template() {
    return template;
  }

  String name() {
    return template.logicalId();
  }

  long timeoutMillis() {
    return template.timeoutSeconds() * 1_000L;
  }

  Object invoke(Object event, Context context) {
    return handler.handleRequest(event, context);
  }
}
