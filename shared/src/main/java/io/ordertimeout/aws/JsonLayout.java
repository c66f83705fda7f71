package io.ordertimeout.aws;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.LayoutBase;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.Map;

/**
 * One JSON object per log line, for CloudWatch Logs Insights: {@code timestamp, level, logger,
 * message}, every MDC entry ({@code requestId}, {@code orderId}, {@code function}, set by {@link
 * Invocation}) and the stack trace as one {@code error} string, so a multi-line trace stays one log
 * event.
 *
 * <p>A 60-line layout over logback instead of Powertools logging (AspectJ weaving, log4j2 or its
 * own logback module) or logstash-logback-encoder (its own Jackson module tree): both do more than
 * these five fields need and add to every cold start.
 */
public final class JsonLayout extends LayoutBase<ILoggingEvent> {
  private static final JsonFactory JSON = new JsonFactory();

  @Override
  public String doLayout(ILoggingEvent event) {
    StringWriter out = new StringWriter(256);
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      g.writeStringField("timestamp", Instant.ofEpochMilli(event.getTimeStamp()).toString());
      g.writeStringField("level", event.getLevel().toString());
      g.writeStringField("logger", event.getLoggerName());
      g.writeStringField("message", event.getFormattedMessage());
      for (Map.Entry<String, String> e : event.getMDCPropertyMap().entrySet()) {
        g.writeStringField(e.getKey(), e.getValue());
      }
      IThrowableProxy error = event.getThrowableProxy();
      if (error != null) {
        g.writeStringField("error", ThrowableProxyUtil.asString(error));
      }
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write a log line as JSON", e);
    }
    return out.append(CoreConstants.LINE_SEPARATOR).toString();
  }
}
