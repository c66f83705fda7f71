package io.ordertimeout.embedded.wechat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A WeChat Pay APIv3 simulator on the JDK HttpServer (loopback, free port) that the real
 * wechatpay-java SDK talks to unchanged: it verifies the merchant's WECHATPAY2-SHA256-RSA2048
 * signature, answers with WeChat's statuses and error bodies, signs every answer (204 included)
 * with a platform key in "public key mode", and sends signed, AEAD_AES_256_GCM-encrypted payment
 * notifications to a webhook, retrying on WeChat's schedule.
 *
 * <p><b>Header-name case.</b> The JDK server rewrites every response header name to "first letter
 * upper, rest lower" ({@code Wechatpay-timestamp}, {@code Request-id}) and cannot be told
 * otherwise. WeChat itself sends {@code Wechatpay-Timestamp}, and the SDK reads headers from a
 * case-sensitive HashMap, so an SDK client pointed here unmodified fails every response validation.
 * The merchant side therefore installs an OkHttp interceptor that restores the canonical names
 * (shared: WeChatHeaderInterceptor); it is needed in production as well, because over HTTP/2 every
 * header name arrives lower-cased.
 *
 * <p><b>Codes.</b> 404 ORDER_NOT_EXIST, 400 ORDER_CLOSED, 400 ORDERPAID (closing or re-prepaying a
 * paid order), 202 USERPAYING (closing an order whose payer is entering the password), 403
 * OUT_TRADE_NO_USED, 429 FREQUENCY_LIMITED, 500 SYSTEM_ERROR, 401 SIGN_ERROR, 404
 * RESOURCE_NOT_EXISTS (refunds).
 */
public final class WeChatPaySimulator implements AutoCloseable {

  public static final String MCHID = "1900000109";

  private final String mchid;
  public static final String APPID = "wxd678efh567hg6787";

  private final Clock clock;
  private final KeyPair platformKeys = SimulatorKeys.take();
  private final KeyPair merchantKeys = SimulatorKeys.take();
  private final String platformPublicKeyId = "PUB_KEY_ID_01" + WeChatCrypto.digits(26);
  private final String merchantSerialNumber = WeChatCrypto.upperHex(40);
  private final String apiV3Key = WeChatCrypto.nonce(32);
  private final TradeBook book;
  private final NotificationSender sender;
  private final RefundDesk refundDesk;
  private final HttpServer server;
  private final ExecutorService httpThreads;
  private final CountDownLatch stopping = new CountDownLatch(1);
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Map<Endpoint, AtomicInteger> calls = new EnumMap<>(Endpoint.class);
  private final Map<Endpoint, Deque<Fault>> faults = new EnumMap<>(Endpoint.class);
  private final Map<Endpoint, Duration> latencies = new ConcurrentHashMap<>();
  private final Map<Endpoint, CountDownLatch> holds = new ConcurrentHashMap<>();
  private volatile Duration hangTime = Duration.ofSeconds(10);
  private volatile boolean followNotifyUrl;
  private final NotificationControls notices = new NotificationControls();
  private final SubMerchants subMerchants;
  private final TradeBills bills;

  /** Late payments of each trade, in the order they were asked for; guarded by itself. */
  private final Map<String, List<LatePayment>> latePayments = new HashMap<>();

  /** Runs late payments; one thread, so two due at the same moment run in the order asked. */
  private final ScheduledExecutorService payer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "wechatpay-sim-payer");
            t.setDaemon(true);
            return t;
          });

  private WeChatPaySimulator(Clock clock, String mchid) throws IOException {
    this.clock = clock;
    this.mchid = mchid;
    this.book = new TradeBook(mchid, APPID, clock);
    this.sender = new NotificationSender(clock);
    this.subMerchants = new SubMerchants(this, clock);
    this.refundDesk = new RefundDesk(book, new NotificationSender(clock), this, clock);
    for (Endpoint e : Endpoint.values()) {
      calls.put(e, new AtomicInteger());
      faults.put(e, new ArrayDeque<>());
    }
    // TCP_NODELAY: without it every answer after the first on a kept-alive connection (the SDK's
    // OkHttp pool) waits 40 ms for the client's delayed ACK; see HttpServers
    this.server = HttpServers.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    // Unbounded daemon threads: a HANG fault parks one thread for the hang time; others must go on.
    this.httpThreads =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "wechatpay-sim-http");
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(httpThreads);
    ApiHandler api = new ApiHandler(this, book, subMerchants, clock);
    server.createContext("/", api);
    this.bills = new TradeBills(this, book, subMerchants, api, clock);
    server.createContext(TradeBills.TRADEBILL_PATH, bills);
    server.createContext(TradeBills.DOWNLOAD_PATH, bills);
    // the longest matching prefix wins, and no WeChat API path starts with /_sim
    server.createContext(ControlHandler.PREFIX, new ControlHandler(this));
    server.start();
  }

  /**
   * Starts with keys no running simulator holds (see {@link SimulatorKeys}) on a free loopback
   * port.
   */
  public static WeChatPaySimulator start() {
    return start(Clock.systemUTC());
  }

  /** As {@link #start()}, with the clock that stamps answers, checks signatures and expiries. */
  public static WeChatPaySimulator start(Clock clock) {
    return start(clock, MCHID);
  }

  /**
   * As {@link #start(Clock)}, as the merchant {@code mchid}: simulators of different merchants, for
   * tenants that each have their own (WeChat's out_trade_no is unique per merchant).
   */
  public static WeChatPaySimulator start(Clock clock, String mchid) {
    try {
      return new WeChatPaySimulator(clock, mchid);
    } catch (IOException e) {
      throw new UncheckedIOException("WeChat Pay simulator could not bind a loopback port", e);
    }
  }

  /** The JDK server itself, for the test that reads its sockets' options. */
  HttpServer httpServer() {
    return server;
  }

  // ---- what the merchant side is configured from ----

  /** http://127.0.0.1:port, to replace https://api.mch.weixin.qq.com. */
  public URI baseUrl() {
    InetSocketAddress address = server.getAddress();
    return URI.create("http://" + address.getAddress().getHostAddress() + ":" + address.getPort());
  }

  public String mchid() {
    return mchid;
  }

  public String appid() {
    return APPID;
  }

  public PrivateKey merchantPrivateKey() {
    return merchantKeys.getPrivate();
  }

  public String merchantPrivateKeyPem() {
    return WeChatCrypto.pem("PRIVATE KEY", merchantKeys.getPrivate().getEncoded());
  }

  public PublicKey merchantPublicKey() {
    return merchantKeys.getPublic();
  }

  public String merchantSerialNumber() {
    return merchantSerialNumber;
  }

  public PublicKey platformPublicKey() {
    return platformKeys.getPublic();
  }

  public String platformPublicKeyPem() {
    return WeChatCrypto.pem("PUBLIC KEY", platformKeys.getPublic().getEncoded());
  }

  public String platformPublicKeyId() {
    return platformPublicKeyId;
  }

  public String apiV3Key() {
    return apiV3Key;
  }

  PrivateKey platformPrivateKey() {
    return platformKeys.getPrivate();
  }

  /**
   * This simulator as a service provider: its sub-merchants, their trades and the partner APIs'
   * controls.
   */
  public SubMerchants subMerchants() {
    return subMerchants;
  }

  NotificationSender sender() {
    return sender;
  }

  boolean followsNotifyUrl() {
    return followNotifyUrl;
  }

  // ---- trade controls ----

  /** The trade bills this simulator serves, and the control that plants one. */
  public TradeBills tradeBills() {
    return bills;
  }

  /**
   * The payer pays: trade_state becomes SUCCESS (transaction_id, success_time, payer openid) and a
   * TRANSACTION.SUCCESS notification goes to the webhook (lost if none is set), with the configured
   * delay and copies.
   */
  public TradeSnapshot pay(String outTradeNo) {
    TradeSnapshot paid = book.markPaid(outTradeNo);
    scheduleNotifications(List.of(outTradeNo));
    return paid;
  }

  /** Pays all, then delivers their notifications in an order shuffled by {@code seed}. */
  public List<TradeSnapshot> payShuffled(List<String> outTradeNos, long seed) {
    List<TradeSnapshot> paid = new ArrayList<>();
    for (String outTradeNo : outTradeNos) {
      paid.add(book.markPaid(outTradeNo));
    }
    List<String> order = new ArrayList<>(outTradeNos);
    Collections.shuffle(order, new Random(seed));
    scheduleNotifications(order);
    return paid;
  }

  /**
   * The payer is entering the password: queries say USERPAYING and close answers 202 USERPAYING.
   */
  public void setUserPaying(String outTradeNo) {
    book.markUserPaying(outTradeNo);
  }

  /**
   * The payer is entering the password and walks away {@code abandonAfter} from now: USERPAYING
   * until then, NOTPAY after (unless the trade was paid or closed meanwhile). To have the payer
   * complete instead, even past time_expire, follow {@link #setUserPaying} with {@link #payLater}.
   *
   * @throws IllegalArgumentException no such trade, or a delay outside 1 ms..24 h
   * @throws IllegalStateException the trade is not NOTPAY
   */
  public void setUserPaying(String outTradeNo, Duration abandonAfter) {
    if (abandonAfter.toMillis() < 1 || abandonAfter.compareTo(NotificationControls.MAX_DELAY) > 0) {
      throw new IllegalArgumentException(
          "an abandoned payment's delay must be 1ms..24h, was " + abandonAfter);
    }
    book.markUserPaying(outTradeNo);
    payer.schedule(
        () -> abandonIfPaying(outTradeNo), abandonAfter.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * The payer leaves the password sheet now without paying: USERPAYING becomes NOTPAY, and the
   * trade can be closed (or paid again before time_expire).
   *
   * @throws IllegalStateException the trade is not USERPAYING
   */
  public void abandonPayment(String outTradeNo) {
    book.markAbandoned(outTradeNo);
  }

  private void abandonIfPaying(String outTradeNo) {
    try {
      book.markAbandoned(outTradeNo);
    } catch (IllegalStateException | IllegalArgumentException e) {
      // paid, closed or forgotten meanwhile: nothing is left to abandon
    }
  }

  /**
   * The payer pays {@code delay} from now, as {@link #pay} would then: a trade closed by then, or
   * NOTPAY past its time_expire, is refused, and {@link #latePayments} says so; a USERPAYING one
   * completes even past time_expire. Answers when it is due.
   *
   * @throws IllegalArgumentException no such trade, or a delay outside 1 ms..24 h
   * @throws IllegalStateException the trade could not be paid even now (closed, paid, expired)
   */
  public Instant payLater(String outTradeNo, Duration delay) {
    if (delay.toMillis() < 1 || delay.compareTo(NotificationControls.MAX_DELAY) > 0) {
      throw new IllegalArgumentException("a late payment's delay must be 1ms..24h, was " + delay);
    }
    book.requirePayable(outTradeNo, "pay");
    Instant due = clock.instant().plus(delay);
    int index;
    synchronized (latePayments) {
      List<LatePayment> list = latePayments.computeIfAbsent(outTradeNo, k -> new ArrayList<>());
      list.add(LatePayment.pending(due));
      index = list.size() - 1;
    }
    payer.schedule(() -> payNow(outTradeNo, index), delay.toMillis(), TimeUnit.MILLISECONDS);
    return due;
  }

  private void payNow(String outTradeNo, int index) {
    LatePayment outcome;
    try {
      pay(outTradeNo);
      outcome = latePayment(outTradeNo, index).paid();
    } catch (IllegalStateException e) {
      outcome = latePayment(outTradeNo, index).refused(e.getMessage());
    }
    synchronized (latePayments) {
      latePayments.get(outTradeNo).set(index, outcome);
    }
  }

  private LatePayment latePayment(String outTradeNo, int index) {
    synchronized (latePayments) {
      return latePayments.get(outTradeNo).get(index);
    }
  }

  /** The late payments asked for this trade, oldest first. */
  public List<LatePayment> latePayments(String outTradeNo) {
    synchronized (latePayments) {
      return List.copyOf(latePayments.getOrDefault(outTradeNo, List.of()));
    }
  }

  public Optional<TradeSnapshot> trade(String outTradeNo) {
    return book.snapshot(outTradeNo);
  }

  /**
   * Forgets these trades as if they had never been prepaid: the trade, its notification controls
   * and counts, its recorded deliveries and late payments. WeChat keeps trades for years, and so
   * does this simulator until told otherwise; a test running for half an hour (the soak: 40 orders
   * a round, about 240 rounds) forgets its settled trades so that the ~1.5 KB each holds in this
   * JVM's heap does not read as the service's own growth. A query of a forgotten trade answers 404
   * ORDER_NOT_EXIST; a notification retry still scheduled for it is still sent. Answers how many
   * trades there were.
   */
  public int forget(Collection<String> outTradeNos) {
    int forgotten = 0;
    for (String outTradeNo : outTradeNos) {
      if (book.forget(outTradeNo)) {
        forgotten++;
      }
      notices.forget(outTradeNo);
      synchronized (latePayments) {
        latePayments.remove(outTradeNo);
      }
    }
    sender.forget(Set.copyOf(outTradeNos));
    return forgotten;
  }

  /**
   * The notify_url the trade's first prepay sent; empty when no prepay created it or it had none.
   */
  public Optional<String> notifyUrl(String outTradeNo) {
    return book.notifyUrl(outTradeNo);
  }

  private void scheduleNotifications(List<String> outTradeNos) {
    for (String outTradeNo : outTradeNos) {
      scheduleNotifications(outTradeNo, 0);
    }
  }

  /** Lost copies are simply not scheduled: the webhook never hears of them, not even a retry. */
  private int scheduleNotifications(String outTradeNo, int copiesOverride) {
    NotificationControls.Plan plan = notices.plan(outTradeNo, copiesOverride);
    Optional<URI> tradeUrl = followNotifyUrl ? tradeNotifyUrl(outTradeNo) : Optional.empty();
    for (int copy = 0; copy < plan.delivered(); copy++) {
      if (tradeUrl.isPresent()) {
        sender.scheduleTo(tradeUrl.get(), notification(outTradeNo), outTradeNo, plan.delay());
      } else {
        sender.schedule(notification(outTradeNo), outTradeNo, plan.delay());
      }
    }
    return plan.delivered();
  }

  /** The trade's notify_url when it is an absolute http(s) URL; else empty (the webhook URL). */
  private Optional<URI> tradeNotifyUrl(String outTradeNo) {
    return book.notifyUrl(outTradeNo)
        .flatMap(
            url -> {
              try {
                URI uri = URI.create(url);
                boolean http = "http".equals(uri.getScheme()) || "https".equals(uri.getScheme());
                return http && uri.getHost() != null ? Optional.of(uri) : Optional.empty();
              } catch (IllegalArgumentException e) {
                return Optional.empty();
              }
            });
  }

  // ---- notification controls ----

  /** Where notifications of later payments go (fixed per payment); null loses them. */
  public void setWebhookUrl(URI url) {
    sender.webhook(url);
  }

  /**
   * true: each payment's notifications go to the notify_url its trade's first prepay sent, as
   * WeChat sends them (a tenant's own {@code /wechatpay/notify/<tenantId>}), and to the webhook URL
   * only for a trade without a usable one. false, the default: every notification goes to the
   * webhook URL, so a test may prepay with any notify_url.
   */
  public void setFollowNotifyUrl(boolean follow) {
    this.followNotifyUrl = follow;
  }

  /** Multiplies WeChat's retry gaps (15s .. 6h); 0.001 turns 24h4m into about 87 s. */
  public void setRetryScale(double factor) {
    sender.retryScale(factor);
    refundDesk.retryScale(factor);
  }

  /**
   * Each payment's notification is delivered {@code copies} (1..100) times, each with its own
   * retries.
   */
  public void setNotificationCopies(int copies) {
    notices.copies(copies);
  }

  /** The first attempt of each payment's notification waits {@code delay} (0..24 h). */
  public void setNotificationDelay(Duration delay) {
    notices.delay(delay);
  }

  /**
   * The next {@code count} notifications of any trade are lost, retries included (0 loses none);
   * replaces an earlier count. A trade's own count ({@link #loseNotifications(String, int)}) is
   * used up first.
   */
  public void loseNotifications(int count) {
    notices.lose(count);
  }

  /**
   * The next {@code count} notifications of this trade's payment are lost, retries included.
   *
   * @throws IllegalStateException the trade is already paid (its notification is out) or closed
   */
  public void loseNotifications(String outTradeNo, int count) {
    NotificationControls.checkLose(count);
    book.requireUnpaid(outTradeNo, "lose the notification of");
    notices.lose(outTradeNo, count);
  }

  /** As {@link #setNotificationCopies(int)} for this trade's payment only. */
  public void setNotificationCopies(String outTradeNo, int copies) {
    NotificationControls.checkCopies(copies);
    book.requireUnpaid(outTradeNo, "repeat the notification of");
    notices.copies(outTradeNo, copies);
  }

  /** As {@link #setNotificationDelay(Duration)} for this trade's payment only. */
  public void setNotificationDelay(String outTradeNo, Duration delay) {
    NotificationControls.checkDelay(delay);
    book.requireUnpaid(outTradeNo, "delay the notification of");
    notices.delay(outTradeNo, delay);
  }

  /**
   * WeChat notifies a paid trade again: {@code copies} more notifications, each with its own id and
   * retries, after the trade's delay and subject to the lose counters. Answers how many were sent.
   *
   * @throws IllegalStateException the trade is not SUCCESS
   */
  public int resendNotification(String outTradeNo, int copies) {
    NotificationControls.checkCopies(copies);
    book.requireSuccess(outTradeNo, "resend the notification of");
    return scheduleNotifications(outTradeNo, copies);
  }

  NotificationControls.Settings notificationSettings() {
    return notices.global();
  }

  NotificationControls.Settings notificationSettings(String outTradeNo) {
    return notices.of(outTradeNo);
  }

  NotificationControls.Counts notificationCounts(String outTradeNo) {
    return notices.counts(outTradeNo);
  }

  /** A correct notification for the trade's current state, to alter for attack tests. */
  public NotificationBuilder notification(String outTradeNo) {
    String transaction = book.transaction(outTradeNo).toString();
    return new NotificationBuilder(
        transaction, platformKeys.getPrivate(), platformPublicKeyId, apiV3Key, clock);
  }

  /**
   * Posts one notification as given, without retries; answers the webhook's status (-1: no answer).
   */
  public int sendRawNotification(SignedNotification notification) {
    return sender.sendOnce(notification);
  }

  /** Every delivery attempt so far, in order. */
  public List<Delivery> deliveries() {
    return sender.deliveries();
  }

  // ---- refund controls (RefundDesk) ----

  /**
   * Refunds settle this long after they are created (200 ms by default), then notify their
   * notify_url.
   */
  public void setRefundDelay(Duration delay) {
    refundDesk.delay(delay);
  }

  /**
   * The refund settles ABNORMAL (the payer's card is gone) or CLOSED instead of SUCCESS: now when
   * it is PROCESSING, else once created and its delay passed. Answers the refund, or the plan.
   *
   * @throws IllegalStateException the refund is settled already
   */
  public String settleRefund(String outRefundNo, String outcome) {
    return refundDesk.plan(outRefundNo, RefundDesk.Outcome.valueOf(outcome)).toString();
  }

  /**
   * The exception refund of an ABNORMAL refund was applied for: PROCESSING again, then SUCCESS.
   *
   * @throws IllegalStateException the refund is not ABNORMAL
   */
  public void reapplyAbnormalRefund(String outRefundNo) {
    refundDesk.reapply(outRefundNo);
  }

  /** The refund's next notification is lost (retries included): only a query tells its outcome. */
  public void loseRefundNotification(String outRefundNo) {
    refundDesk.loseNotification(outRefundNo);
  }

  /** The notify_url the refund's create request sent; empty when it had none. */
  public Optional<String> refundNotifyUrl(String outRefundNo) {
    return refundDesk.notifyUrl(outRefundNo);
  }

  /**
   * Every delivery attempt of a refund notification so far, in order (outTradeNo: the refund's).
   */
  public List<Delivery> refundDeliveries() {
    return refundDesk.deliveries();
  }

  /** The refund's status as a query answers it (PROCESSING, SUCCESS, ABNORMAL, CLOSED). */
  public Optional<String> refundStatus(String outRefundNo) {
    return refundDesk.refund(outRefundNo).map(r -> r.path("status").asText());
  }

  /**
   * A correct refund notification of the refund's current status (REFUND.SUCCESS, ...), to deliver
   * by hand or alter for attack tests.
   *
   * @throws IllegalArgumentException no such refund
   */
  public NotificationBuilder refundNotification(String outRefundNo) {
    return refundDesk.notification(
        refund(outRefundNo)
            .orElseThrow(() -> new IllegalArgumentException("no refund " + outRefundNo)));
  }

  Optional<com.fasterxml.jackson.databind.node.ObjectNode> refund(String outRefundNo) {
    return refundDesk.refund(outRefundNo);
  }

  // ---- latency, faults, counters ----

  public void setLatency(Endpoint endpoint, Duration latency) {
    latencies.put(endpoint, latency);
  }

  /**
   * Holds every call to {@code endpoint}, once counted by {@link #callCount}, until the returned
   * gate opens (closing it opens it; so does {@link #close()}): a test puts a step of its own
   * between a call's arrival and its answer without betting on a latency outlasting that step on a
   * busy machine. The caller's read timeout still runs while a call is held.
   */
  public Gate hold(Endpoint endpoint) {
    CountDownLatch gate = new CountDownLatch(1);
    if (holds.putIfAbsent(endpoint, gate) != null) {
      throw new IllegalStateException(endpoint + " calls are already held");
    }
    return new Gate(
        () -> {
          holds.remove(endpoint, gate);
          gate.countDown();
        });
  }

  /** Lets the calls {@link #hold} holds through. */
  public static final class Gate implements AutoCloseable {
    private final Runnable open;

    private Gate(Runnable open) {
      this.open = open;
    }

    public void open() {
      open.run();
    }

    @Override
    public void close() {
      open();
    }
  }

  /** How long a HANG fault holds the call before answering 500 (default 10 s). */
  public void setHangTime(Duration hang) {
    this.hangTime = hang;
  }

  /**
   * The next {@code times} calls to {@code endpoint} fail with {@code fault}, after the signature
   * check.
   */
  public void injectFault(Endpoint endpoint, Fault fault, int times) {
    Deque<Fault> queue = faults.get(endpoint);
    synchronized (queue) {
      for (int i = 0; i < times; i++) {
        queue.addLast(fault);
      }
    }
  }

  /** Drops every fault not yet answered; answers how many there were. */
  public int clearFaults() {
    int cleared = 0;
    for (Deque<Fault> queue : faults.values()) {
      synchronized (queue) {
        cleared += queue.size();
        queue.clear();
      }
    }
    return cleared;
  }

  /** The faults still to answer, per endpoint, in the order they will be answered. */
  public Map<Endpoint, List<Fault>> pendingFaults() {
    Map<Endpoint, List<Fault>> pending = new EnumMap<>(Endpoint.class);
    faults.forEach(
        (endpoint, queue) -> {
          synchronized (queue) {
            pending.put(endpoint, List.copyOf(queue));
          }
        });
    return pending;
  }

  public int callCount(Endpoint endpoint) {
    return calls.get(endpoint).get();
  }

  void recordCall(Endpoint endpoint) {
    calls.get(endpoint).incrementAndGet();
  }

  Fault nextFault(Endpoint endpoint) {
    Deque<Fault> queue = faults.get(endpoint);
    synchronized (queue) {
      return queue.pollFirst();
    }
  }

  Duration latency(Endpoint endpoint) {
    return latencies.getOrDefault(endpoint, Duration.ZERO);
  }

  Duration hangTime() {
    return hangTime;
  }

  /**
   * Waits while calls to {@code endpoint} are held ({@link #hold}) or until the simulator stops.
   */
  void awaitGate(Endpoint endpoint) {
    CountDownLatch gate = holds.get(endpoint);
    if (gate == null) {
      return;
    }
    try {
      gate.await(); // opened by its Gate or by close()
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Sleeps, but wakes at once when the simulator stops so no thread outlives {@link #close()}. */
  void pause(Duration duration) {
    if (duration.isZero() || duration.isNegative()) {
      return;
    }
    try {
      stopping.await(duration.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Stops the server, wakes hanging and held calls and drops pending notifications. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    stopping.countDown();
    holds.values().forEach(CountDownLatch::countDown);
    server.stop(0);
    payer.shutdownNow();
    refundDesk.close();
    subMerchants.close();
    sender.close();
    httpThreads.shutdownNow();
    SimulatorKeys.giveBack(platformKeys);
    SimulatorKeys.giveBack(merchantKeys);
  }
}
