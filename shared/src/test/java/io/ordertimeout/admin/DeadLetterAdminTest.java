package io.ordertimeout.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.compensation.CompensationSettings;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.stream.DeadLetters.DeadLetter;
import io.ordertimeout.stream.EventType;
import io.ordertimeout.stream.OrderEvent;
import io.ordertimeout.testing.TestStack;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Listing, inspecting and redriving dead letters against real MariaDB and Redis. */
class DeadLetterAdminTest {
  static final String OPERATOR = "arn:aws:iam::123456789012:user/oncall";
  private TestStack stack;
  private AdminOps ops;

  @BeforeEach
  void setUp() {
    stack = TestStack.create("admin-dl");
    ops = stack.app().adminOps(CompensationSettings.defaults());
  }

  @AfterEach
  void tearDown() {
    stack.close();
  }

  @Test
  void listAndShowGiveThePayloadAndTheErrorHistory() {
    deadLetter("1-0", EventType.CLOSE_DUE, "order-00001");
    deadLetter("2-0", EventType.CANCEL_REQUESTED, "order-00002");

    List<Map<String, Object>> open = ops.deadLetters().list(DeadLetterAdmin.Filter.open());
    List<Map<String, Object>> cancels =
        ops.deadLetters()
            .list(new DeadLetterAdmin.Filter("open", null, null, "cancel_requested", 10));
    long id = ((Number) open.get(0).get("id")).longValue();
    Map<String, Object> shown = ops.deadLetters().show(id);

    assertThat(open)
        .extracting(r -> r.get("orderId"))
        .containsExactly("order-00001", "order-00002");
    assertThat(cancels).extracting(r -> r.get("orderId")).containsExactly("order-00002");
    assertThat(shown.get("entryId")).isEqualTo("1-0");
    assertThat(shown.get("deliveries")).isEqualTo(5L);
    assertThat(shown.get("errors").toString())
        .isEqualTo("[\"attempt 1: db down\",\"attempt 5: db down\"]");
    assertThat(shown.get("payload").toString()).contains("close_due").contains("order-00001");
    assertThat(shown.get("resolvedAt")).isNull();
  }

  @Test
  void redriveAppendsTheEventAgainAndResolvesTheLetterOnceTwiceIsOnce() {
    deadLetter("1-0", EventType.CLOSE_DUE, "order-00001");
    long id = onlyId();
    long streamBefore = streamLength();

    Map<String, Object> first = ops.deadLetters().redrive(List.of(id), OPERATOR);
    Map<String, Object> second = ops.deadLetters().redrive(List.of(id), OPERATOR);

    assertThat(outcome(first, id)).isEqualTo("REDRIVEN");
    assertThat(outcome(second, id)).isEqualTo("ALREADY_RESOLVED");
    assertThat(streamLength()).isEqualTo(streamBefore + 1);
    String entryId = (String) ((Map<?, ?>) first.get(Long.toString(id))).get("entryId");
    var appended = stack.app().redis().sync().xrange(stack.app().stream().key(), range(entryId));
    assertThat(OrderEvent.parse(appended.get(0).getBody().get("e")).orderId())
        .isEqualTo("order-00001");
    assertThat(
            stack.dump(
                "SELECT resolution, resolved_by, redrive_entry_id, resolved_at IS NOT NULL"
                    + " FROM dead_letters"))
        .containsExactly("REDRIVEN|" + OPERATOR + "|" + entryId + "|1|");
    assertThat(stack.dump("SELECT action, subject, operator FROM admin_actions"))
        .containsExactly("redrive|dead-letter:" + id + "|" + OPERATOR + "|");
    assertThat(ops.deadLetters().list(DeadLetterAdmin.Filter.open())).isEmpty();
  }

  @Test
  void anUnknownIdIsRefusedAndNothingIsRedriven() {
    deadLetter("1-0", EventType.CLOSE_DUE, "order-00001");
    long id = onlyId();
    long streamBefore = streamLength();

    assertThatThrownBy(() -> ops.deadLetters().redrive(List.of(id, id + 100), OPERATOR))
        .isInstanceOfSatisfying(
            AdminRefusal.class, e -> assertThat(e.kind()).isEqualTo(AdminRefusal.Kind.NOT_FOUND))
        .hasMessageContaining("[" + (id + 100) + "]")
        .hasMessageContaining("nothing redriven");
    assertThatThrownBy(() -> ops.deadLetters().show(id + 100))
        .isInstanceOf(AdminRefusal.class)
        .hasMessage("dead letter " + (id + 100) + " does not exist");

    assertThat(streamLength()).isEqualTo(streamBefore);
    assertThat(stack.count("SELECT COUNT(*) FROM dead_letters WHERE resolved_at IS NULL"))
        .isEqualTo(1);
    assertThat(stack.count("SELECT COUNT(*) FROM admin_actions")).isZero();
  }

  @Test
  void badFiltersAreRefusedWithTheirReason() {
    assertThatThrownBy(() -> new DeadLetterAdmin.Filter("stale", null, null, null, 10))
        .isInstanceOfSatisfying(
            AdminRefusal.class, e -> assertThat(e.code()).isEqualTo("INVALID_STATUS"));
    assertThatThrownBy(() -> new DeadLetterAdmin.Filter("open", null, null, "exploded", 10))
        .isInstanceOfSatisfying(
            AdminRefusal.class, e -> assertThat(e.code()).isEqualTo("INVALID_EVENT_TYPE"));
    assertThatThrownBy(() -> new DeadLetterAdmin.Filter("open", null, "x; DROP", null, 10))
        .isInstanceOfSatisfying(
            AdminRefusal.class, e -> assertThat(e.code()).isEqualTo("INVALID_ORDER_ID"));
    assertThatThrownBy(() -> new DeadLetterAdmin.Filter("open", null, null, null, 501))
        .isInstanceOfSatisfying(
            AdminRefusal.class, e -> assertThat(e.code()).isEqualTo("INVALID_LIMIT"));
    assertThatThrownBy(() -> ops.deadLetters().redrive(List.of(), OPERATOR))
        .isInstanceOfSatisfying(
            AdminRefusal.class, e -> assertThat(e.code()).isEqualTo("NO_DEAD_LETTERS"));
  }

  @Test
  void aPayloadThatIsNoEventIsLeftOpenAsNotRedrivable() {
    stack
        .app()
        .deadLetters()
        .store(
            new DeadLetter("9-0", null, null, null, Map.of("e", "{\"v\":7}"), 5, List.of("bad")));
    long id = onlyId();

    Map<String, Object> result = ops.deadLetters().redrive(List.of(id), OPERATOR);

    assertThat(outcome(result, id)).isEqualTo("NOT_REDRIVABLE");
    assertThat(((Map<?, ?>) result.get(Long.toString(id))).get("reason").toString())
        .contains("unsupported event version");
    assertThat(stack.count("SELECT COUNT(*) FROM dead_letters WHERE resolved_at IS NULL"))
        .isEqualTo(1);
  }

  @Test
  void aFilterRedrivesOnlyTheLettersItSelects() {
    deadLetter("1-0", EventType.CLOSE_DUE, "order-00001");
    deadLetter("2-0", EventType.CANCEL_REQUESTED, "order-00002");
    deadLetter("3-0", EventType.CLOSE_DUE, "order-00003");

    Map<String, Object> result =
        ops.deadLetters()
            .redrive(new DeadLetterAdmin.Filter("open", null, null, "close_due", 500), OPERATOR);

    assertThat(result).hasSize(2);
    assertThat(stack.dump("SELECT order_id, resolution FROM dead_letters ORDER BY order_id"))
        .containsExactly("order-00001|REDRIVEN|", "order-00002|null|", "order-00003|REDRIVEN|");
  }

  @Test
  void eightOperatorsRedrivingAllAtOnceRedriveEachLetterExactlyOnce() throws Exception {
    int letters = 30;
    for (int i = 0; i < letters; i++) {
      deadLetter(i + "-0", EventType.CLOSE_DUE, String.format("order-%05d", i));
    }
    long streamBefore = streamLength();
    int threads = 8;
    CyclicBarrier start = new CyclicBarrier(threads);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<CompletableFuture<Map<String, Object>>> runs = new ArrayList<>();
    try {
      for (int t = 0; t < threads; t++) {
        String operator = OPERATOR + "-" + t;
        runs.add(
            CompletableFuture.supplyAsync(
                () -> {
                  await(start);
                  return ops.deadLetters().redrive(DeadLetterAdmin.Filter.open(), operator);
                },
                pool));
      }
      long redriven =
          runs.stream()
              .map(CompletableFuture::join)
              .flatMap(m -> m.values().stream())
              .filter(o -> "REDRIVEN".equals(((Map<?, ?>) o).get("outcome")))
              .count();

      assertThat(redriven).isEqualTo(letters);
    } finally {
      pool.shutdownNow();
    }
    assertThat(streamLength()).isEqualTo(streamBefore + letters);
    assertThat(stack.count("SELECT COUNT(*) FROM dead_letters WHERE resolution = 'REDRIVEN'"))
        .isEqualTo(letters);
    assertThat(stack.count("SELECT COUNT(DISTINCT redrive_entry_id) FROM dead_letters"))
        .isEqualTo(letters);
    assertThat(stack.count("SELECT COUNT(*) FROM admin_actions WHERE action = 'redrive'"))
        .isEqualTo(letters);
  }

  private void deadLetter(String entryId, EventType type, String orderId) {
    OrderEvent event = OrderEvent.of(type, orderId, "default", 1_700_000_000_000L);
    stack
        .app()
        .deadLetters()
        .store(
            new DeadLetter(
                entryId,
                type.wireName(),
                TenantIds.DEFAULT,
                orderId,
                Map.of("e", event.toJson()),
                5,
                List.of("attempt 1: db down", "attempt 5: db down")));
  }

  private long onlyId() {
    return stack.count("SELECT MAX(dead_letter_id) FROM dead_letters");
  }

  private long streamLength() {
    return stack.app().redis().sync().exists(stack.app().stream().key()) == 0
        ? 0
        : stack.app().stream().length();
  }

  private static String outcome(Map<String, Object> result, long id) {
    return (String) ((Map<?, ?>) result.get(Long.toString(id))).get("outcome");
  }

  private static io.lettuce.core.Range<String> range(String id) {
    return io.lettuce.core.Range.create(id, id);
  }

  private static void await(CyclicBarrier barrier) {
    try {
      barrier.await();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
