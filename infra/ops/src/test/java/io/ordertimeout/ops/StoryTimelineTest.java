package io.ordertimeout.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * {@code ./ops admin story}'s timeline, exactly. shipped.json and force-closed.json are the admin
 * API's answers from a {@code ./local up} (an order paid and shipped, one force-closed by an
 * operator); claimed.json is an unpaid order past its deadline whose close is stuck: its timer
 * claimed, an entry pending, a dead letter and a flag.
 */
class StoryTimelineTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aShippedOrderShowsEachStepAgainstThePaymentDeadlineAndTheReceiptDeadlineAhead()
      throws IOException {
    String text = StoryTimeline.render(story("shipped"), Instant.parse("2026-12-04T02:00:00Z"));

    assertThat(text)
        .isEqualTo(
            """
            order ops-demo-1  tenant default  SHIPPED  1000 fen  user user-0003  (now 2026-12-04 02:00:00Z)

            TIME                  STEP     DETAIL
            2026-12-04 01:57:13Z  placed   pay by 2026-12-04 02:07:13Z (10m 0s to pay)
            2026-12-04 01:57:13Z  prepaid  prepay wx7501257273848563956987164800, 9m 59s before the payment deadline
            2026-12-04 01:57:19Z  paid     transaction 4247300280007719960560591722, 9m 54s before the payment deadline
            2026-12-04 01:57:23Z  shipped  SF SF123, receipt due 2026-12-14 01:57:23Z

            deadline  receipt due 2026-12-14 01:57:23Z, in 9d 23h (it is received AUTO)
            timer     ABSENT; shard 6; sweeper lease held by 1796349349484-a252fb2b-6c8a-46b9-91a5-5a81929abaf3, 9.8s left
            items     sku-0003 x1
            stock     RESERVE sku-0003 x1, SELL sku-0003 x1
            events    #1 created, #2 paid, #3 shipped; streamed 3 of 3, bridged 0 of 3
            pending   none for this order (0 pending entries scanned)
            letters   none
            flags     none
            wechat    SUCCESS, out_trade_no ops-demo-1, transaction 4247300280007719960560591722, 1000 fen, paid 2026-12-04 01:57:19Z
            """);
  }

  @Test
  void aForceCloseShowsTheCloseAndTheOperatorsActionWithItsReason() throws IOException {
    String text =
        StoryTimeline.render(story("force-closed"), Instant.parse("2026-12-04T02:00:00Z"));

    assertThat(text)
        .isEqualTo(
            """
            order ops-demo-2  tenant default  CLOSED  500 fen  user user-0004  (now 2026-12-04 02:00:00Z)

            TIME                  STEP      DETAIL
            2026-12-04 01:57:23Z  placed    pay by 2026-12-04 02:07:23Z (10m 0s to pay)
            2026-12-04 01:57:24Z  closed    OPERATOR, 9m 59s before the payment deadline
            2026-12-04 01:57:24Z  operator  force-close by arn:aws:iam::000000000000:user/local-mall-backend: duplicate, ticket CS-9 -> CLOSED

            deadline  none: CLOSED is final
            timer     ABSENT; shard 12; sweeper lease held by 1796349349484-a252fb2b-6c8a-46b9-91a5-5a81929abaf3, 9.8s left
            items     sku-0004 x2
            stock     RESERVE sku-0004 x2, RELEASE sku-0004 x2
            events    #4 created, #5 closed; streamed 2 of 2, bridged 0 of 2
            pending   none for this order (0 pending entries scanned)
            letters   none
            flags     none
            """);
  }

  @Test
  void anOverdueOrderShowsItsClaimedTimerLeaseAndWhatIsStuckInOneLineEach() throws IOException {
    String text = StoryTimeline.render(story("claimed"), Instant.parse("2026-12-04T02:00:12Z"));

    assertThat(text)
        .isEqualTo(
            """
            order ops-demo-3  tenant default  UNPAID  1000 fen  user user-0003  (now 2026-12-04 02:00:12Z)

            TIME                  STEP          DETAIL
            2026-12-04 01:50:00Z  placed        pay by 2026-12-04 02:00:00Z (10m 0s to pay)
            2026-12-04 01:51:30Z  prepaid       prepay wx7501257273848563956987164800, 8m 30s before the payment deadline
            2026-12-04 01:59:58Z  cancel asked  1.5s before the payment deadline

            deadline  payment due 2026-12-04 02:00:00Z, overdue by 12s (the close path closes it)
            timer     CLAIMED, claim lease until 2026-12-04 02:00:30Z (in 18s); shard 3; sweeper lease held by sweep-7f3a, 4.2s left
            items     sku-0003 x1
            stock     RESERVE sku-0003 x1
            events    #7 created, #9 cancel_requested; streamed 2 of 2, bridged 1 of 2
            pending   1796349598600-0 at closer-2, 3 deliveries, idle 1m 1s (12 pending entries scanned)
            letters   #41 close_due OPEN, 5 deliveries
            flags     #5 POISON_ORDER open, seen 2x since 2026-12-04 01:58:30Z
            wechat    NOTPAY, out_trade_no ops-demo-3, 1000 fen
            """);
  }

  @Test
  void aScheduledTimerShowsItsDueTimeAndAFreeSweeperLease() {
    JsonNode story =
        AdminJson.machine(
            JSON.valueToTree(
                java.util.Map.of(
                    "order",
                    java.util.Map.of(
                        "order_id", "o-9",
                        "tenant_id", "shop-a",
                        "user_id", "u-1",
                        "status", "UNPAID",
                        "amount_fen", 1,
                        "created_at", "2026-12-04T01:59:00Z",
                        "expire_at", "2026-12-04T02:14:00Z"),
                    "timer",
                    java.util.Map.of(
                        "shard",
                        0,
                        "state",
                        "SCHEDULED",
                        "scoreAt",
                        "2026-12-04T02:14:00Z",
                        "sweeperLeaseTtlMs",
                        -2))));

    String text = StoryTimeline.render(story, Instant.parse("2026-12-04T02:00:00Z"));

    assertThat(text)
        .contains("2026-12-04 01:59:00Z  placed  pay by 2026-12-04 02:14:00Z (15m 0s to pay)\n")
        .contains(
            "deadline  payment due 2026-12-04 02:14:00Z, in 14m 0s (the close path closes it)\n")
        .contains(
            "timer     SCHEDULED, due 2026-12-04 02:14:00Z (in 14m 0s); shard 0; sweeper lease free\n")
        .contains("events    none in the outbox\n");
  }

  static JsonNode story(String name) throws IOException {
    return AdminJson.machine(
        JSON.readTree(Files.readString(Path.of("src/test/resources/stories/" + name + ".json"))));
  }
}
