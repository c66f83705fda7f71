package io.ordertimeout.aws;

import com.amazonaws.services.lambda.runtime.Context;
import io.ordertimeout.metrics.Metrics;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.MDC;

/**
 * The frame around one handler invocation: the request id (and later the order id) in the logging
 * MDC, so every JSON log line carries them, and the metrics flushed as EMF when the invocation
 * ends, whether it returned or threw. A long-running invocation (the scheduled loops: {@link
 * ScheduledHandler}) also flushes every {@link EmfFlusher#INTERVAL} while it runs, so its metrics
 * are at most 10 s old and a run killed at its timeout loses at most its last 10 s of them.
 *
 * <pre>{@code
 * return Invocation.run(context, app.metrics(), () -> route(event));
 * return Invocation.run(context, job.metrics(), EmfFlusher.INTERVAL, () -> job.run(...));
 * }</pre>
 */
public final class Invocation {
  public static final String REQUEST_ID = "requestId";
  public static final String ORDER_ID = "orderId";
  public static final String FUNCTION = "function";

  /**
   * EMF goes to stdout on Lambda only; elsewhere (tests, the local runner) nothing is written and
   * the registry stays readable in memory.
   */
  private static final Consumer<String> SINK =
      System.getenv("AWS_LAMBDA_FUNCTION_NAME") != null ? System.out::println : null;

  /** One publisher per registry (per execution environment), weakly held: tests make many. */
  private static final Map<Metrics, EmfPublisher> PUBLISHERS =
      Collections.synchronizedMap(new WeakHashMap<>());

  private Invocation() {}

  /**
   * Runs {@code body} framed by the MDC and an EMF flush of {@code metrics}: to stdout on Lambda,
   * to the sink given to {@link #publishTo} elsewhere, none otherwise.
   */
  public static <T> T run(Context context, Metrics metrics, Supplier<T> body) {
    return run(context, publisher(metrics), null, body);
  }

  /**
   * As {@link #run(Context, Metrics, Supplier)}, flushing also every {@code flushEvery} while
   * {@code body} runs ({@link EmfFlusher}).
   */
  public static <T> T run(Context context, Metrics metrics, Duration flushEvery, Supplier<T> body) {
    return run(context, publisher(metrics), flushEvery, body);
  }

  private static EmfPublisher publisher(Metrics metrics) {
    return SINK == null
        ? PUBLISHERS.get(metrics)
        : PUBLISHERS.computeIfAbsent(
            metrics, m -> new EmfPublisher(m, SINK, System::currentTimeMillis));
  }

  /**
   * From now on, invocations over {@code metrics} flush their EMF documents to {@code sink}, so a
   * test (or a local run) reads exactly what Lambda would have written to CloudWatch Logs.
   */
  public static void publishTo(Metrics metrics, Consumer<String> sink) {
    PUBLISHERS.put(metrics, new EmfPublisher(metrics, sink, System::currentTimeMillis));
  }

  /** As {@link #run(Context, Metrics, Supplier)} with an explicit publisher (null: none). */
  public static <T> T run(Context context, EmfPublisher publisher, Supplier<T> body) {
    return run(context, publisher, null, body);
  }

  /**
   * The frame itself: {@code publisher} null publishes nothing; {@code flushEvery} null flushes
   * only at the end.
   */
  public static <T> T run(
      Context context, EmfPublisher publisher, Duration flushEvery, Supplier<T> body) {
    String function = functionName(context);
    MDC.put(REQUEST_ID, context == null ? "-" : context.getAwsRequestId());
    MDC.put(FUNCTION, function);
    EmfFlusher flusher =
        publisher == null || flushEvery == null
            ? null
            : EmfFlusher.start(publisher, function, flushEvery);
    try {
      return body.get();
    } finally {
      try {
        if (flusher != null) {
          flusher.close();
        }
        if (publisher != null) {
          publisher.flush(function);
        }
      } finally {
        MDC.remove(REQUEST_ID);
        MDC.remove(ORDER_ID);
        MDC.remove(FUNCTION);
      }
    }
  }

  /** Tags the rest of this invocation's log lines with an order id. */
  public static void orderId(String orderId) {
    MDC.put(ORDER_ID, orderId);
  }

  private static String functionName(Context context) {
    String name = context == null ? null : context.getFunctionName();
    if (name == null) {
      name = System.getenv("AWS_LAMBDA_FUNCTION_NAME");
    }
    return name == null ? "local" : name;
  }
}
