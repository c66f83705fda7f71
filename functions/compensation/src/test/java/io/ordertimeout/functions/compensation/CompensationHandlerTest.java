package io.ordertimeout.functions.compensation;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.OrderItem;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.testing.LambdaTestContext;
import io.ordertimeout.testing.TestStack;
import io.ordertimeout.util.Json;
import java.io.File;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The handler with the sample schedule event, on the real servers. */
class CompensationHandlerTest {
  private TestStack stack;

  @BeforeEach
  void setUp() {
    stack = TestStack.create("compensation-fn");
    stack.seedSku("sku-tea-500g", 100);
  }

  @AfterEach
  void tearDown() {
    stack.assertInvariants();
    stack.close();
  }

  @Test
  @SuppressWarnings("unchecked")
  void theScheduledEventRunsOnePassAndAnswersItsReport() throws Exception {
    List<String> missed =
        stack.bulkPlace("missed", 3, Duration.ofMinutes(-5), i -> new OrderItem("sku-tea-500g", 1));
    List<String> lost =
        stack.bulkPlace("lost", 2, Duration.ofMinutes(10), i -> new OrderItem("sku-tea-500g", 2));
    stack.app().timers().remove(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, missed);
    stack.app().timers().remove(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, lost);
    Map<String, Object> schedule =
        Json.MAPPER.readValue(new File("../../events/compensation-schedule.json"), Map.class);

    String answer =
        new CompensationHandler(CompensationHandler.job(stack.app(), java.util.Map.of()))
            .handleRequest(schedule, new LambdaTestContext("compensation", 60_000));

    JsonNode report = Json.MAPPER.readTree(answer);
    assertThat(report.path("counts").path("missed_by_redis").asLong()).isEqualTo(3);
    assertThat(report.path("counts").path("rescheduled").asLong()).isEqualTo(2);
    assertThat(report.path("counts").path("orders_audited").asLong()).isEqualTo(5);
    assertThat(report.path("flags")).isEmpty();
    assertThat(report.path("failures")).isEmpty();
    assertThat(report.path("durationMs").asLong()).isNotNegative();
    assertThat(stack.count("SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'")).isEqualTo(3);
    assertThat(stack.app().timers().size(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT))
        .isEqualTo(2);
    assertThat(stack.app().metrics().counter("compensation_missed_by_redis")).isEqualTo(3);
  }
}
