package io.ordertimeout.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.aws.JsonLayout;
import io.ordertimeout.util.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.LoggerFactory;

/**
 * The log lines written while it is open, laid out by the Lambda layout ({@link JsonLayout}: MDC
 * fields such as requestId included), for tests of what a function logs. The root level is INFO
 * (Lambda's) while it is open, since the build runs tests at WARN; close it to restore that and
 * detach.
 */
public final class LogLines implements AutoCloseable {
  private final List<String> lines = new CopyOnWriteArrayList<>();
  private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
  private final AppenderBase<ILoggingEvent> appender;
  private final Level level = root.getLevel();

  private LogLines() {
    JsonLayout layout = new JsonLayout();
    layout.setContext((LoggerContext) LoggerFactory.getILoggerFactory());
    layout.start();
    appender =
        new AppenderBase<>() {
          @Override
          protected void append(ILoggingEvent event) {
            lines.add(layout.doLayout(event));
          }
        };
    appender.setContext(layout.getContext());
    appender.start();
    root.addAppender(appender);
    root.setLevel(Level.INFO);
  }

  /** Starts capturing every logger's lines, at INFO and above. */
  public static LogLines capture() {
    return new LogLines();
  }

  /** The lines so far, parsed. */
  public List<JsonNode> json() {
    List<JsonNode> out = new ArrayList<>(lines.size());
    for (String line : lines) {
      try {
        out.add(Json.MAPPER.readTree(line));
      } catch (IOException e) {
        throw new UncheckedIOException("log line is not JSON: " + line, e);
      }
    }
    return out;
  }

  @Override
  public void close() {
    root.setLevel(level);
    root.detachAppender(appender);
    appender.stop();
  }
}
