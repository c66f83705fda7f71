package io.ordertimeout.aws;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.testing.LambdaTestContext;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/** JSON log lines with request and order id, through the real logback pipeline. */
class JsonLoggingTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<String> lines = new ArrayList<>();
  private final Logger logger = (Logger) LoggerFactory.getLogger("otc.test.json");
  private AppenderBase<ILoggingEvent> appender;

  @BeforeEach
  void attach() {
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
    appender.start();
    logger.addAppender(appender);
    logger.setLevel(Level.INFO);
    logger.setAdditive(false);
  }

  @AfterEach
  void detach() {
    logger.detachAppender(appender);
    logger.setAdditive(true);
  }

  @Test
  void linesCarryRequestAndOrderIdInsideAnInvocation() throws Exception {
    var context = new LambdaTestContext("otc-order-created", 10_000);

    String result =
        Invocation.run(
            context,
            new Metrics(),
            () -> {
              Invocation.orderId("202611300001");
              logger.info("placed order {} with \"quotes\"\nand a newline", "202611300001");
              return "ok";
            });

    assertThat(result).isEqualTo("ok");
    assertThat(lines).hasSize(1);
    assertThat(lines.get(0).strip()).doesNotContain("\n");
    JsonNode line = JSON.readTree(lines.get(0));
    assertThat(line.get("level").asText()).isEqualTo("INFO");
    assertThat(line.get("logger").asText()).isEqualTo("otc.test.json");
    assertThat(line.get("message").asText())
        .isEqualTo("placed order 202611300001 with \"quotes\"\nand a newline");
    assertThat(line.get("requestId").asText()).isEqualTo(context.getAwsRequestId());
    assertThat(line.get("orderId").asText()).isEqualTo("202611300001");
    assertThat(line.get("function").asText()).isEqualTo("otc-order-created");
    assertThat(line.get("timestamp").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
  }

  @Test
  void stackTraceIsOneFieldAndTheMdcIsClearedEvenWhenTheBodyThrows() throws Exception {
    var context = new LambdaTestContext("otc-sweep", 10_000);
    List<String> emf = new ArrayList<>();
    Metrics metrics = new Metrics();
    EmfPublisher publisher = new EmfPublisher(metrics, emf::add, () -> 1L);

    assertThatThrownBy(
            () ->
                Invocation.run(
                    context,
                    publisher,
                    () -> {
                      metrics.count("sweep_errors", 1);
                      logger.error("sweep failed", new IllegalStateException("shard 3 lost"));
                      throw new IllegalStateException("boom");
                    }))
        .hasMessage("boom");

    JsonNode line = JSON.readTree(lines.get(0));
    assertThat(line.get("error").asText())
        .startsWith("java.lang.IllegalStateException: shard 3 lost")
        .contains("\tat ");
    assertThat(MDC.get(Invocation.REQUEST_ID)).isNull();
    assertThat(MDC.get(Invocation.ORDER_ID)).isNull();
    assertThat(emf).as("metrics flushed although the invocation threw").hasSize(1);
    assertThat(JSON.readTree(emf.get(0)).get("sweep_errors").asLong()).isOne();
  }
}
