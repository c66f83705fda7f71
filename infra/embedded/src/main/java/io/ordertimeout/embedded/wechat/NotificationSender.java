package io.ordertimeout.embedded.wechat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Delivers notifications to the merchant's webhook and retries on WeChat's schedule. One thread
 * sends everything, so notifications scheduled for the same moment leave in the order they were
 * scheduled (the shuffled-delivery control relies on that).
 */
final class NotificationSender implements AutoCloseable {

  /** Gaps between attempts, from WeChat's documentation: 15 retries over 24h4m. */
  static final List<Duration> WECHAT_RETRY_SCHEDULE =
      List.of(
          Duration.ofSeconds(15),
          Duration.ofSeconds(15),
          Duration.ofSeconds(30),
          Duration.ofMinutes(3),
          Duration.ofMinutes(10),
          Duration.ofMinutes(20),
          Duration.ofMinutes(30),
          Duration.ofMinutes(30),
          Duration.ofMinutes(30),
          Duration.ofMinutes(60),
          Duration.ofHours(3),
          Duration.ofHours(3),
          Duration.ofHours(3),
          Duration.ofHours(6),
          Duration.ofHours(6));

  /** WeChat waits 5 s for a webhook answer before counting the attempt as failed. */
  private static final Duration WEBHOOK_TIMEOUT = Duration.ofSeconds(5);

  private final Clock clock;

  /**
   * The JDK client sets TCP_NODELAY on its own connections (jdk.internal.net.http
   * PlainHttpConnection); the 40 ms per notification on a kept-alive connection was the receiving
   * server's Nagle delay (the local API server, fixed in HttpServers).
   */
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final ScheduledExecutorService scheduler =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "wechatpay-sim-notify");
            t.setDaemon(true);
            return t;
          });
  private final List<Delivery> deliveries = new CopyOnWriteArrayList<>();
  private volatile URI webhook;
  private volatile double retryScale = 1.0;

  NotificationSender(Clock clock) {
    this.clock = clock;
  }

  void webhook(URI url) {
    this.webhook = url;
  }

  /** Where notifications go when not to a trade's own notify_url; null loses them. */
  URI webhookUrl() {
    return webhook;
  }

  void retryScale(double factor) {
    if (!(factor > 0)) {
      throw new IllegalArgumentException("retry scale must be > 0, was " + factor);
    }
    this.retryScale = factor;
  }

  List<Delivery> deliveries() {
    return List.copyOf(deliveries);
  }

  /** Drops the recorded deliveries of these trades (see WeChatPaySimulator#forget). */
  void forget(Set<String> outTradeNos) {
    deliveries.removeIf(d -> outTradeNos.contains(d.outTradeNo()));
  }

  /**
   * Schedules the first attempt after {@code delay}; retries follow until 2xx or the schedule ends.
   * The webhook is fixed now, as WeChat fixes notify_url per trade; none set means the notification
   * is lost.
   */
  void schedule(NotificationBuilder notification, String outTradeNo, Duration delay) {
    scheduleTo(webhook, notification, outTradeNo, delay);
  }

  /** As {@link #schedule}, to {@code target} instead of the webhook URL; null loses it. */
  void scheduleTo(URI target, NotificationBuilder notification, String outTradeNo, Duration delay) {
    if (target == null) {
      return;
    }
    String body = notification.body(); // one body for all attempts: retries repeat the same event
    scheduler.schedule(
        () -> attempt(target, notification, body, outTradeNo, 1),
        delay.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** Sends once, no retry; answers the webhook's status or -1 on connection failure. */
  int sendOnce(SignedNotification notification) {
    URI target = webhook;
    if (target == null) {
      throw new IllegalStateException("no webhook URL set on the WeChat Pay simulator");
    }
    return post(target, notification);
  }

  private void attempt(
      URI target, NotificationBuilder notification, String body, String outTradeNo, int attempt) {
    int status = post(target, notification.sign(body));
    Delivery delivery =
        new Delivery(notification.notificationId(), outTradeNo, attempt, status, clock.instant());
    deliveries.add(delivery);
    if (!delivery.accepted() && attempt <= WECHAT_RETRY_SCHEDULE.size()) {
      long gapMillis =
          Math.max(1, (long) (WECHAT_RETRY_SCHEDULE.get(attempt - 1).toMillis() * retryScale));
      scheduler.schedule(
          () -> attempt(target, notification, body, outTradeNo, attempt + 1),
          gapMillis,
          TimeUnit.MILLISECONDS);
    }
  }

  private int post(URI target, SignedNotification notification) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(target)
            .timeout(WEBHOOK_TIMEOUT)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(notification.body()));
    notification.headers().forEach(request::header);
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  @Override
  public void close() {
    scheduler.shutdownNow();
  }
}
