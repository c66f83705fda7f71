package io.ordertimeout.local;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import io.ordertimeout.compensation.CompensationJob;
import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.consume.ConsumerJob;
import io.ordertimeout.http.AdminRoutes;
import io.ordertimeout.http.OrderApi;
import io.ordertimeout.http.PaymentWebhook;
import io.ordertimeout.sweep.SweepJob;
import io.ordertimeout.wiring.Components;
import io.ordertimeout.wiring.RelayingConsumer;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A function of template.yaml with its real handler instance, loaded by the template's Handler
 * string and built through its constructor taking its narrow entry point (OrderApi, SweepJob...),
 * so every handler shares the local stack's clients instead of reading Lambda's environment.
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
  static Optional<LocalFunction> load(SamTemplate.Function function, Components app) {
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
      SamTemplate.Function function, Class<?> type, Components app) {
    Map<Class<?>, Supplier<Object>> entryPoints = entryPoints(app);
    Constructor<?> constructor =
        Arrays.stream(type.getConstructors())
            .filter(c -> c.getParameterCount() == 1)
            .filter(c -> entryPoints.containsKey(c.getParameterTypes()[0]))
            .findFirst()
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        function.logicalId()
                            + ": "
                            + type.getName()
                            + " has no public constructor taking one of "
                            + entryPoints.keySet()
                            + "; the local runner needs one to share its clients (the"
                            + " no-argument one reads Lambda's environment)"));
    try {
      return (RequestHandler<Object, Object>)
          constructor.newInstance(entryPoints.get(constructor.getParameterTypes()[0]).get());
    } catch (InvocationTargetException e) {
      throw new IllegalStateException(
          function.logicalId() + ": " + type.getName() + " failed to start", e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(
          function.logicalId() + ": could not instantiate " + type.getName(), e);
    }
  }

  /**
   * The narrow entry points a handler may take, built from the shared wiring on demand; the local
   * compensation pass runs with the default settings, as a test does.
   */
  private static Map<Class<?>, Supplier<Object>> entryPoints(Components app) {
    return Map.of(
        OrderApi.class, app::orderApi,
        PaymentWebhook.class, app::paymentWebhook,
        SweepJob.class, app::sweepJob,
        ConsumerJob.class, app::consumerJob,
        RelayingConsumer.class, app::relayingConsumer,
        CompensationJob.class, () -> app.compensationJob(CompensationSettings.defaults()),
        AdminRoutes.class, () -> app.adminRoutes(CompensationSettings.defaults()));
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
