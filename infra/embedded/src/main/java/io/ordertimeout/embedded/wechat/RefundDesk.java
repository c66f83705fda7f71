package io.ordertimeout.embedded.wechat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * How WeChat settles refunds: a refund is PROCESSING when the create call answers, and settles a
 * while later ({@link #delay}, 200 ms by default; on WeChat seconds to days) as SUCCESS, or as the
 * outcome a test planned for its out_refund_no (ABNORMAL: the payer's card is gone; CLOSED). Each
 * settlement sends a signed, encrypted refund notification (REFUND.SUCCESS, REFUND.ABNORMAL,
 * REFUND.CLOSED) to the notify_url of the refund's create request, retried on WeChat's schedule,
 * unless the refund has none or a test lost it ({@link #loseNotification}): then only a query
 * tells.
 */
final class RefundDesk implements AutoCloseable {

  /** What a refund settles as. */
  enum Outcome {
    SUCCESS,
    ABNORMAL,
    CLOSED
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  private final TradeBook book;
  private final NotificationSender sender;
  private final WeChatPaySimulator keys;
  private final Clock clock;
  private final Map<String, Outcome> planned = new ConcurrentHashMap<>();
  private final Map<String, String> notifyUrls = new ConcurrentHashMap<>();
  private final Set<String> toLose = ConcurrentHashMap.newKeySet();
  private volatile Duration delay = Duration.ofMillis(200);
  private final ScheduledExecutorService settler =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "wechatpay-sim-refunds");
            t.setDaemon(true);
            return t;
          });

  /**
   * @param sender the refund notifications' own: their deliveries (and a slow or unreachable
   *     notify_url) never mix with the payment notifications'
   */
  RefundDesk(TradeBook book, NotificationSender sender, WeChatPaySimulator keys, Clock clock) {
    this.book = book;
    this.sender = sender;
    this.keys = keys;
    this.clock = clock;
    book.onRefundCreated(this::created);
  }

  void delay(Duration settleAfter) {
    if (settleAfter.isNegative() || settleAfter.compareTo(NotificationControls.MAX_DELAY) > 0) {
      throw new IllegalArgumentException("a refund's delay must be 0..24h, was " + settleAfter);
    }
    this.delay = settleAfter;
  }

  /**
   * The refund settles as {@code outcome}: now if it is PROCESSING, else when it is created and its
   * delay passed.
   *
   * @throws IllegalStateException the refund is settled already
   */
  ObjectNode plan(String outRefundNo, Outcome outcome) {
    Optional<ObjectNode> refund = book.refund(outRefundNo);
    if (refund.isEmpty()) {
      planned.put(outRefundNo, outcome);
      return JSON.createObjectNode()
          .put("out_refund_no", outRefundNo)
          .put("planned", outcome.name());
    }
    return settle(outRefundNo, outcome.name())
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "refund "
                        + outRefundNo
                        + " is "
                        + refund.get().path("status").asText()
                        + ", not PROCESSING"));
  }

  /**
   * An operator applied for the exception refund of an ABNORMAL refund: PROCESSING again, SUCCESS
   * after the delay.
   */
  ObjectNode reapply(String outRefundNo) {
    ObjectNode refund =
        book.settleRefund(outRefundNo, "PROCESSING")
            .orElseThrow(
                () -> new IllegalStateException("refund " + outRefundNo + " is not ABNORMAL"));
    planned.remove(outRefundNo);
    schedule(outRefundNo);
    return refund;
  }

  /** The refund's next notification is lost, retries included. */
  void loseNotification(String outRefundNo) {
    toLose.add(outRefundNo);
  }

  Optional<String> notifyUrl(String outRefundNo) {
    return Optional.ofNullable(notifyUrls.get(outRefundNo));
  }

  Optional<ObjectNode> refund(String outRefundNo) {
    return book.refund(outRefundNo);
  }

  /** Under the book's lock: only records and schedules. */
  private void created(String outRefundNo, String notifyUrl) {
    if (notifyUrl != null) {
      notifyUrls.put(outRefundNo, notifyUrl);
    }
    schedule(outRefundNo);
  }

  private void schedule(String outRefundNo) {
    settler.schedule(
        () -> {
          Outcome outcome = planned.getOrDefault(outRefundNo, Outcome.SUCCESS);
          settle(outRefundNo, outcome.name());
        },
        delay.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  private Optional<ObjectNode> settle(String outRefundNo, String status) {
    Optional<ObjectNode> settled = book.settleRefund(outRefundNo, status);
    settled.ifPresent(this::notifyOutcome);
    return settled;
  }

  private void notifyOutcome(ObjectNode refund) {
    String outRefundNo = refund.path("out_refund_no").asText();
    if (toLose.remove(outRefundNo)) {
      return;
    }
    Optional<URI> target = httpUrl(notifyUrls.get(outRefundNo));
    if (target.isEmpty()) {
      return; // WeChat would post to the merchant platform's refund URL; here it is lost
    }
    sender.scheduleTo(
        target.get(), notification(refund), refund.path("out_trade_no").asText(), Duration.ZERO);
  }

  /** A correct notification of the refund's current status, as WeChat sends it. */
  NotificationBuilder notification(ObjectNode refund) {
    String status = refund.path("status").asText();
    return new NotificationBuilder(
            plaintext(refund).toString(),
            keys.platformPrivateKey(),
            keys.platformPublicKeyId(),
            keys.apiV3Key(),
            clock)
        .eventType("REFUND." + status)
        .resource("refund", summary(status));
  }

  /** The decrypted resource of WeChat's refund notification. */
  private ObjectNode plaintext(ObjectNode refund) {
    ObjectNode node =
        JSON.createObjectNode()
            .put("mchid", book.mchid())
            .put("out_trade_no", refund.path("out_trade_no").asText())
            .put("transaction_id", refund.path("transaction_id").asText())
            .put("out_refund_no", refund.path("out_refund_no").asText())
            .put("refund_id", refund.path("refund_id").asText())
            .put("refund_status", refund.path("status").asText())
            .put("user_received_account", refund.path("user_received_account").asText());
    if (refund.has("success_time")) {
      node.put("success_time", refund.path("success_time").asText());
    }
    ObjectNode amount = refund.path("amount").deepCopy();
    node.putObject("amount")
        .put("total", amount.path("total").asLong())
        .put("refund", amount.path("refund").asLong())
        .put("payer_total", amount.path("payer_total").asLong())
        .put("payer_refund", amount.path("payer_refund").asLong());
    return node;
  }

  private static String summary(String status) {
    return switch (status) {
      case "SUCCESS" -> "退款成功";
      case "ABNORMAL" -> "退款异常";
      default -> "退款关闭";
    };
  }

  private static Optional<URI> httpUrl(String url) {
    if (url == null) {
      return Optional.empty();
    }
    try {
      URI uri = URI.create(url);
      boolean http = "http".equals(uri.getScheme()) || "https".equals(uri.getScheme());
      return http && uri.getHost() != null ? Optional.of(uri) : Optional.empty();
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  List<Delivery> deliveries() {
    return sender.deliveries();
  }

  void retryScale(double factor) {
    sender.retryScale(factor);
  }

  @Override
  public void close() {
    settler.shutdownNow();
    sender.close();
  }
}
