package io.ordertimeout.functions.consumer;

import com.amazonaws.services.lambda.runtime.Context;
import io.ordertimeout.aws.ScheduledHandler;
import io.ordertimeout.consume.ConsumerStats;
import io.ordertimeout.util.Json;
import io.ordertimeout.wiring.Components;
import io.ordertimeout.wiring.RelayingConsumer;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * stream-consumer: invoked by an EventBridge schedule every minute, it consumes the order event
 * stream (group {@code closers}) until the invocation's remaining time falls under the configured
 * margin: closes cancel_requested and close_due orders, retries failures, dead-letters poison. The
 * outbox relay runs beside it for the same time (outbox.RelayingConsumer): it fills the stream from
 * MySQL and puts the events on the EventBridge bus.
 */
public final class StreamConsumerHandler extends ScheduledHandler {
  private static final Logger log = LoggerFactory.getLogger(StreamConsumerHandler.class);

  private final RelayingConsumer job;

  public StreamConsumerHandler() {
    this(Init.JOB);
  }

  public StreamConsumerHandler(RelayingConsumer job) {
    super(job.metrics());
    this.job = job;
  }

  @Override
  protected String handle(Map<String, Object> event, Context context) {
    ConsumerStats stats = job.run(context::getRemainingTimeInMillis);
    String summary = Json.write(Json.MAPPER.valueToTree(stats));
    log.info("stream consumer finished (request {}): {}", context.getAwsRequestId(), summary);
    return summary;
  }

  private static final class Init {
    static final RelayingConsumer JOB = Components.fromEnvironment().relayingConsumer();
  }
}
