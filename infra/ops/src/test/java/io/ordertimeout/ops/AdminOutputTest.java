package io.ordertimeout.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** {@code ./ops admin}'s tables and lines for the answers other than the story, exactly. */
class AdminOutputTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Instant NOW = Instant.parse("2026-12-04T02:00:00Z");

  @Test
  void deadLettersAreATableWithTheLastErrorCut() throws IOException {
    JsonNode letters =
        json(
            """
            [{"id":41,"eventType":"close_due","tenantId":"default","orderId":"ops-demo-3",
              "deliveries":5,"createdAt":"2026-12-04T01:58:00Z","resolution":null,
              "errors":["first","DataAccessException: lock wait timeout exceeded; try restarting transaction on orders (tenant_id, order_id)"]},
             {"id":7,"eventType":"cancel_requested","tenantId":"shop-a","orderId":"a-1",
              "deliveries":1,"createdAt":"2026-12-03T23:01:02.345Z","resolution":"REDRIVEN",
              "errors":[]}]
            """);

    assertThat(AdminOutput.render("dead-letters", letters, NOW))
        .isEqualTo(
            """
            ID  TYPE              TENANT   ORDER       DELIVERIES  CREATED               STATE     ERROR
            41  close_due         default  ops-demo-3  5           2026-12-04 01:58:00Z  OPEN      DataAccessException: lock wait timeout exceeded; try restarting transaction o...
            7   cancel_requested  shop-a   a-1         1           2026-12-03 23:01:02Z  REDRIVEN  -
            2 dead letter(s)
            """);
    assertThat(AdminOutput.render("dead-letters", json("[]"), NOW)).isEqualTo("no dead letters\n");
  }

  @Test
  void oneDeadLetterShowsItsFieldsItsPayloadAndEveryError() throws IOException {
    JsonNode letter = StoryTimelineTest.story("claimed").at("/deadLetters/0");

    assertThat(AdminOutput.render("dead-letter", letter, NOW))
        .isEqualTo(
            """
            id          41
            type        close_due
            tenant      default
            order       ops-demo-3
            entry       1796349000000-0
            deliveries  5
            created     2026-12-04 01:58:00Z
            state       OPEN
            payload     {"type":"close_due","orderId":"ops-demo-3"}
            errors (2)
              DataAccessException: lock wait timeout
              DataAccessException: lock wait timeout
            """);
  }

  @Test
  void redriveOutcomesAreATablePerLetter() throws IOException {
    JsonNode outcomes =
        json(
            """
            {"41":{"outcome":"REDRIVEN","entryId":"1796349700000-0","orderId":"ops-demo-3"},
             "7":{"outcome":"ALREADY_RESOLVED","resolution":"REDRIVEN","resolvedBy":"arn:aws:iam::1:user/a"},
             "9":{"outcome":"NOT_REDRIVABLE","reason":"payload is no event"}}
            """);

    assertThat(AdminOutput.render("redrive", outcomes, NOW))
        .isEqualTo(
            """
            ID  OUTCOME           DETAIL
            41  REDRIVEN          entry 1796349700000-0, order ops-demo-3
            7   ALREADY_RESOLVED  REDRIVEN by arn:aws:iam::1:user/a
            9   NOT_REDRIVABLE    payload is no event
            """);
    assertThat(AdminOutput.render("redrive", json("{}"), NOW)).isEqualTo("nothing to redrive\n");
  }

  @Test
  void pausesAreATableOfEveryJobWithWhoAndSinceWhen() throws IOException {
    JsonNode pauses =
        json(
            """
            {"consumer":"running",
             "sweep":{"job":"sweep","pausedBy":"arn:aws:iam::000000000000:user/local-mall-backend",
                      "reason":"INC-1","pausedAt":"2026-12-04T01:57:30.549Z"}}
            """);

    String expected =
        """
        JOB       STATE    SINCE                              BY                                                 REASON
        consumer  RUNNING  -                                  -                                                  -
        sweep     PAUSED   2026-12-04 01:57:30Z (2m 29s ago)  arn:aws:iam::000000000000:user/local-mall-backend  INC-1
        """;
    assertThat(AdminOutput.render("pauses", pauses, NOW)).isEqualTo(expected);
    assertThat(AdminOutput.render("pause", pauses, NOW)).isEqualTo(expected);
  }

  @Test
  void anyOtherAnswerIsIndentedKeyValueLines() throws IOException {
    JsonNode report =
        AdminJson.machine(
            json(
                """
                {"startedAt":"2026-12-04T01:57:35.324Z","durationMs":45,
                 "counts":{"leases_checked":48,"orders_audited":2},
                 "repairs":[],"failures":[{"kind":"QUERY","orderId":"o-1"}],"skipped":["wechat"]}
                """));

    assertThat(AdminOutput.render("compensate", report, NOW))
        .isEqualTo(
            """
            startedAt   2026-12-04T01:57:35.324Z
            durationMs  45
            counts
              leasesChecked  48
              ordersAudited  2
            repairs     none
            failures
              -
                kind     QUERY
                orderId  o-1
            skipped
              - wechat
            """);
    assertThat(
            AdminOutput.render(
                "force-close",
                json("{\"orderId\":\"o-1\",\"outcome\":\"CLOSED\",\"closeReason\":\"OPERATOR\"}"),
                NOW))
        .isEqualTo(
            """
            orderId      o-1
            outcome      CLOSED
            closeReason  OPERATOR
            """);
  }

  private static JsonNode json(String text) throws IOException {
    return JSON.readTree(text);
  }
}
