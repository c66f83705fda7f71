package io.ordertimeout.wechat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.wechat.pay.java.core.exception.ValidationException;
import com.wechat.pay.java.core.notification.NotificationParser;
import com.wechat.pay.java.core.notification.RequestParam;
import io.ordertimeout.wechat.InvalidNotificationException.Reason;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the reader refuses before any key is touched: a timestamp that is not 1-12 ASCII digits, a
 * body over {@link NotificationLimits#MAX_BODY_BYTES}, a serial that is not the tenant's WeChat Pay
 * public key id. None of them reaches the SDK, and no refusal's message carries the body, the nonce
 * or the signature (the SDK's own messages carry all three).
 */
class NotificationReaderLimitsTest {
  static final String TENANT = "shop-a";
  static final Instant NOW = Instant.parse("2026-12-01T08:00:00Z");
  static final String KEY_ID = "PUB_KEY_ID_0114232134912410000000000000";
  static final String NONCE = "nonce-5K8264ILTKCH16CQ2502SI8ZNMTM67VS";
  static final String SIGNATURE = "c2lnbmF0dXJlLW9mLXRoZS1mb3JnZXI=".repeat(4);
  static final String BODY = "{\"id\":\"EV-secret-body-0001\",\"resource\":{\"ciphertext\":\"x\"}}";

  private final NotificationReader reader =
      new NotificationReader(Clock.fixed(NOW, ZoneOffset.UTC));

  /** The SDK's parser, counting its calls and failing as the SDK does on a bad signature. */
  private static final class CountingParser extends NotificationParser {
    final AtomicInteger calls = new AtomicInteger();

    CountingParser() {
      super(Map.of(), Map.of());
    }

    @Override
    public <T> T parse(RequestParam request, Class<T> type) {
      calls.incrementAndGet();
      throw new ValidationException(
          "signature verification failed, message[" + request.getMessage() + "]");
    }
  }

  private final CountingParser parser = new CountingParser();
  private final AtomicInteger keysAsked = new AtomicInteger();
  private final Supplier<TenantClients> tenant =
      () -> {
        keysAsked.incrementAndGet();
        return new TenantClients(credentials(), null, null, parser);
      };

  private static MerchantCredentials credentials() {
    return new MerchantCredentials(
        "1900000001",
        "wx0000000000000001",
        "MERCHANT_SERIAL",
        "-----BEGIN PRIVATE KEY-----",
        "0123456789abcdef0123456789abcdef",
        KEY_ID,
        "-----BEGIN PUBLIC KEY-----",
        "https://mall.example.com/wechatpay/notify");
  }

  private static Map<String, String> headers(String timestamp) {
    Map<String, String> h = new HashMap<>();
    h.put("wechatpay-timestamp", timestamp);
    h.put("wechatpay-nonce", NONCE);
    h.put("wechatpay-serial", KEY_ID);
    h.put("wechatpay-signature", SIGNATURE);
    h.put("wechatpay-signature-type", "WECHATPAY2-SHA256-RSA2048");
    return h;
  }

  private InvalidNotificationException refusal(Map<String, String> headers, String body) {
    return catchThrowableOfType(
        InvalidNotificationException.class, () -> reader.read(TENANT, tenant, headers, body));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "99999999999999999",
        "-99999999999999999",
        "-1",
        "1000000000000",
        " 1764576000",
        "1764576000 ",
        "+1764576000",
        "1.764576E9",
        "0x6923F800",
        "١٧٦٤٥٧٦٠٠٠",
        "１７６４５７６０００"
      })
  void aTimestampThatIsNotOneToTwelveAsciiDigitsIs400BeforeAnyKeyIsUsed(String timestamp) {
    InvalidNotificationException e = refusal(headers(timestamp), BODY);

    assertThat(e).as("timestamp [%s]", timestamp).isNotNull();
    assertThat(e.reason()).isEqualTo(Reason.INVALID_TIMESTAMP);
    assertThat(e.getMessage()).contains("INVALID_TIMESTAMP").doesNotContain(NONCE);
    assertThat(keysAsked).hasValue(0);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "\t"})
  void anEmptyTimestampIsAMissingHeader(String timestamp) {
    InvalidNotificationException e = refusal(headers(timestamp), BODY);

    assertThat(e.reason()).isEqualTo(Reason.MALFORMED);
    assertThat(e.getMessage()).contains("Wechatpay-Timestamp missing");
    assertThat(keysAsked).hasValue(0);
  }

  @Test
  void aTwelveDigitTimestampFarFromOurClockIsStaleNotMalformed() {
    InvalidNotificationException e = refusal(headers("999999999999"), BODY);

    assertThat(e.reason()).isEqualTo(Reason.STALE_TIMESTAMP);
    assertThat(keysAsked).hasValue(0);
  }

  @Test
  void aBodyOverTheCapIsRefusedBeforeAnyKeyIsUsed() {
    String body = "{\"pad\":\"" + "x".repeat(300 * 1024) + "\"}";

    InvalidNotificationException e = refusal(headers(String.valueOf(NOW.getEpochSecond())), body);

    assertThat(e.reason()).isEqualTo(Reason.BODY_TOO_LARGE);
    assertThat(e.getMessage()).contains(String.valueOf(body.length())).doesNotContain("xxxx");
    assertThat(keysAsked).hasValue(0);
    assertThat(parser.calls).hasValue(0);
  }

  @Test
  void theCapCountsUtf8BytesAndAdmitsExactlyTheLimit() {
    String ts = String.valueOf(NOW.getEpochSecond());
    String atLimit = "x".repeat(NotificationLimits.MAX_BODY_BYTES);
    String overByMultibyte = "订".repeat(NotificationLimits.MAX_BODY_BYTES / 3 + 1); // 3 bytes each

    assertThat(refusal(headers(ts), atLimit).reason()).isEqualTo(Reason.BAD_SIGNATURE);
    assertThat(refusal(headers(ts), overByMultibyte).reason()).isEqualTo(Reason.BODY_TOO_LARGE);
    assertThat(parser.calls).hasValue(1);
  }

  @Test
  void aWechatpayHeaderGivenTwiceWithTwoValuesIsMalformed() {
    Map<String, String> h = headers(String.valueOf(NOW.getEpochSecond()));
    h.put("Wechatpay-Timestamp", String.valueOf(NOW.getEpochSecond() - 1));

    assertThat(refusal(h, BODY).reason()).isEqualTo(Reason.MALFORMED);
    assertThat(keysAsked).hasValue(0);
  }

  @Test
  void aNonceOverOneKibIsMalformedBeforeAnyKeyIsUsed() {
    Map<String, String> h = headers(String.valueOf(NOW.getEpochSecond()));
    h.put("wechatpay-nonce", "n".repeat(NotificationLimits.MAX_HEADER_CHARS + 1));

    InvalidNotificationException e = refusal(h, BODY);

    assertThat(e.reason()).isEqualTo(Reason.MALFORMED);
    assertThat(e.getMessage()).doesNotContain("nnnn");
    assertThat(keysAsked).hasValue(0);
  }

  @Test
  void aSerialThatIsNotTheTenantsPublicKeyIdNeverReachesTheSdk() {
    Map<String, String> h = headers(String.valueOf(NOW.getEpochSecond()));
    h.put("wechatpay-serial", "PUB_KEY_ID_0000000000000000000000000000");

    InvalidNotificationException e = refusal(h, BODY);

    assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_SERIAL);
    assertThat(e.publicMessage())
        .isEqualTo(
            new InvalidNotificationException(Reason.BAD_SIGNATURE, TENANT, "detail", null)
                .publicMessage());
    assertThat(parser.calls).hasValue(0);
  }

  @Test
  void aBadSignatureNeverCarriesTheSdksMessageNorItsException() {
    InvalidNotificationException e = refusal(headers(String.valueOf(NOW.getEpochSecond())), BODY);

    assertThat(e.reason()).isEqualTo(Reason.BAD_SIGNATURE);
    assertThat(parser.calls).hasValue(1);
    assertThat(e.getMessage())
        .doesNotContain("EV-secret-body")
        .doesNotContain(NONCE)
        .doesNotContain(SIGNATURE);
    assertThat(e.getCause()).isNull();
  }
}
