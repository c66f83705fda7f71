package io.ordertimeout.aws;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import io.ordertimeout.metrics.Metrics;
import java.time.Duration;
import java.util.Map;

/**
 * The base of every function invoked by an EventBridge schedule. Its {@code handleRequest} is final
 * and runs {@link #handle} inside {@link Invocation#run}, the one place that puts the request id in
 * the logs and flushes the metrics as EMF: a function that skipped it would log without requestId
 * and never publish a metric, so its alarms (dead_letters, close lag) would watch silence.
 *
 * <p>The event and result types are concrete here, not type parameters of a generic base: Lambda
 * finds {@code Handler::handleRequest} by reflection and reads its parameter type to deserialize
 * the event, and an inherited generic method would show it only an unresolved type variable.
 */
public abstract class ScheduledHandler implements RequestHandler<Map<String, Object>, String> {
  private final Metrics metrics;
  private final Duration flushEvery;

  /**
   * @param metrics the registry this function records into; flushed every 10 s ({@link
   *     EmfFlusher#INTERVAL}) while an invocation runs and at its end
   */
  protected ScheduledHandler(Metrics metrics) {
    this(metrics, EmfFlusher.INTERVAL);
  }

  /**
   * With another flush interval than {@link EmfFlusher#INTERVAL}: a test of the periodic flush
   * through this base waits for a shorter interval. Every function uses the constructor above.
   */
  protected ScheduledHandler(Metrics metrics, Duration flushEvery) {
    this.metrics = metrics;
    this.flushEvery = flushEvery;
  }

  @Override
  public final String handleRequest(Map<String, Object> event, Context context) {
    // these invocations run for a minute or more: their metrics are flushed every 10 s as well
    return Invocation.run(context, metrics, flushEvery, () -> handle(event, context));
  }

  /** How often a running invocation flushes its metrics. */
  final Duration flushEvery() {
    return flushEvery;
  }

  /** One invocation's work; answers the summary Lambda returns (and the function logs). */
  protected abstract String handle(Map<String, Object> event, Context context);
}
