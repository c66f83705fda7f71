package io.ordertimeout.functions.notify;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import io.ordertimeout.aws.HttpApiHandler;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.http.ApiError;
import io.ordertimeout.http.HttpBodies;
import io.ordertimeout.http.PaymentWebhook;
import io.ordertimeout.mysql.DataAccessException;
import io.ordertimeout.payment.NotificationService;
import io.ordertimeout.payment.PaymentMismatchException;
import io.ordertimeout.payment.RefundNotificationService;
import io.ordertimeout.payment.ReplayedNotificationException;
import io.ordertimeout.util.Json;
import io.ordertimeout.wechat.EnvironmentMerchantDirectory;
import io.ordertimeout.wechat.InvalidNotificationException;
import io.ordertimeout.wechat.NotificationLimits;
import io.ordertimeout.wechat.PaymentTransientException;
import io.ordertimeout.wiring.Components;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * payment-notify: WeChat Pay's payment notification webhook, {@code POST
 * /wechatpay/notify/{tenantId}} and {@code POST /wechatpay/notify} behind API Gateway's HTTP API
 * (payload 2.0: lower-cased headers, body maybe base64), and its refund notification webhook {@code
 * POST /wechatpay/refund-notify/{tenantId}}, verified and answered by the same rules.
 *
 * <p>204 only after the payment is committed (or was committed before). Otherwise WeChat must see a
 * failure and retry: 4xx for requests that must not be trusted or do not fit an order (body over 16
 * KiB 413, timestamp not 1-12 ASCII digits 400, bad signature or serial 401, stale 401, malformed
 * 400, replayed nonce 409, unknown order 404, amount mismatch 400), 5xx when we could not decide
 * (database or Redis down 503, WeChat refund API down 503), all with {"code":"FAIL","message":...}.
 * Nothing an unauthenticated caller sends may get a 5xx while the database and Redis are up (the
 * API's 5xx alarm pages and rolls deployments back).
 *
 * <p>Tenant: {@code POST /wechatpay/notify/{tenantId}} acts for the tenant its URL names (the
 * notify_url each prepay gives WeChat, MerchantCredentials.notifyUrlFor): the signature is verified
 * and the resource decrypted with that tenant's merchant keys, the trade must name that tenant's
 * mchid and appid, and the order must be that tenant's. {@code POST /wechatpay/notify} is the
 * default tenant's URL, kept for merchants registered with it before tenants had their own. A
 * tenant id that is not {@link TenantIds#PATTERN} is 400 before anything is read; a well-formed one
 * without merchant keys is 401 exactly like a bad signature (no answer tells which tenants exist).
 *
 * <p>Service provider: {@code POST /wechatpay/notify/provider/{spMchid}} is the one URL of all the
 * sub-merchant tenants of provider spMchid. It is verified and decrypted with the provider's keys,
 * and the tenant is the one configured as the sub-merchant the decrypted resource names
 * (sub_mchid), never one the URL or a header names. An spMchid that is not 1-32 digits is 400
 * before anything is read; one no tenant is a sub-merchant of is 401 like a bad signature; a
 * resource naming another provider or a sub-merchant no tenant is, 403.
 */
public final class PaymentNotifyHandler extends HttpApiHandler {
  private static final Logger log = LoggerFactory.getLogger(PaymentNotifyHandler.class);

  private final PaymentWebhook webhook;
  private final String defaultTenantId;

  /** Lambda's constructor: clients come from the environment once per execution environment. */
  public PaymentNotifyHandler() {
    this(Init.WEBHOOK);
  }

  /** For tests and the local runner: the collaborators come from the caller. */
  public PaymentNotifyHandler(PaymentWebhook webhook) {
    this(webhook, EnvironmentMerchantDirectory.DEFAULT_TENANT);
  }

  /**
   * @param defaultTenantId the tenant of {@code POST /wechatpay/notify}, the route without a tenant
   */
  public PaymentNotifyHandler(PaymentWebhook webhook, String defaultTenantId) {
    super(webhook.metrics());
    this.webhook = webhook;
    this.defaultTenantId = defaultTenantId;
  }

  @Override
  protected APIGatewayV2HTTPResponse handle(APIGatewayV2HTTPEvent event, Context context) {
    String requestId = context == null ? "-" : context.getAwsRequestId();
    byte[] raw = null;
    try {
      String spMchid = providerOf(event);
      String tenantId = spMchid == null ? tenantOf(event) : "provider " + spMchid;
      raw = HttpBodies.bytes(event.getBody(), event.getIsBase64Encoded());
      // before anything reads it: the signature check would hash every byte of a 10 MB body
      NotificationLimits.checkBodySize(tenantId, raw.length);
      String body = new String(raw, StandardCharsets.UTF_8);
      Map<String, String> headers = event.getHeaders() == null ? Map.of() : event.getHeaders();
      if (REFUND_ROUTE_KEY.equals(event.getRouteKey())) {
        RefundNotificationService.Result result = refunds().handle(tenantId, headers, body);
        log.info("refund notification {} (request {})", result, requestId);
        return APIGatewayV2HTTPResponse.builder().withStatusCode(204).build();
      }
      NotificationService.Result result =
          spMchid == null
              ? webhook.notifications().handle(tenantId, headers, body)
              : webhook.notifications().handleProvider(spMchid, headers, body);
      log.info("payment notification {} (request {})", result, requestId);
      return APIGatewayV2HTTPResponse.builder().withStatusCode(204).build();
    } catch (RuntimeException e) {
      String kind = REFUND_ROUTE_KEY.equals(event.getRouteKey()) ? "refund" : "payment";
      return failure(e, requestId, raw, kind);
    }
  }

  /** The default tenant's route, as API Gateway's routeKey (template.yaml). */
  static final String ROUTE_KEY = "POST /wechatpay/notify";

  /** The per-tenant route; API Gateway puts the segment in pathParameters.tenantId. */
  static final String TENANT_ROUTE_KEY = "POST /wechatpay/notify/{tenantId}";

  /** A service provider's route; API Gateway puts the segment in pathParameters.spMchid. */
  static final String PROVIDER_ROUTE_KEY = "POST /wechatpay/notify/provider/{spMchid}";

  /** WeChat's mchids are digits; anything else in the URL is refused before the body is read. */
  private static final java.util.regex.Pattern SP_MCHID =
      java.util.regex.Pattern.compile("[0-9]{1,32}");

  /** The provider a provider-route request is for; null for any other route. */
  private static String providerOf(APIGatewayV2HTTPEvent event) {
    if (!PROVIDER_ROUTE_KEY.equals(event.getRouteKey())) {
      return null;
    }
    Map<String, String> params = event.getPathParameters();
    String spMchid = params == null ? null : params.get("spMchid");
    if (spMchid == null || !SP_MCHID.matcher(spMchid).matches()) {
      throw new ApiError(
          400, "INVALID_SP_MCHID", "spMchid in the notify URL must be 1 to 32 digits");
    }
    return spMchid;
  }

  /**
   * The tenant's refund notifications (the notify_url of its refunds, RefundNotifyUrls): verified
   * and answered exactly as the payment route, applied by {@link RefundNotificationService}.
   */
  static final String REFUND_ROUTE_KEY = "POST /wechatpay/refund-notify/{tenantId}";

  /** Without a payment gateway nothing can verify a refund notification: 503, WeChat retries. */
  private RefundNotificationService refunds() {
    if (webhook.refunds() == null) {
      throw new ApiError(
          503, "PAYMENTS_DISABLED", "refund notifications need the WeChat Pay merchant keys");
    }
    return webhook.refunds();
  }

  /**
   * The tenant the request is for, from its route: the default tenant for {@link #ROUTE_KEY}, the
   * path parameter for {@link #TENANT_ROUTE_KEY} (never a default: a missing or malformed id is
   * 400). Anything else API Gateway (or a misrouted local call) hands this function is refused by
   * its routeKey before the body is read: 405 for a notify path under another method, else 404.
   */
  private String tenantOf(APIGatewayV2HTTPEvent event) {
    String routeKey = event.getRouteKey() == null ? "" : event.getRouteKey();
    if (ROUTE_KEY.equals(routeKey)) {
      return defaultTenantId;
    }
    if (TENANT_ROUTE_KEY.equals(routeKey) || REFUND_ROUTE_KEY.equals(routeKey)) {
      Map<String, String> params = event.getPathParameters();
      String tenantId = params == null ? null : params.get("tenantId");
      if (!TenantIds.valid(tenantId)) {
        throw new ApiError(
            400,
            "INVALID_TENANT_ID",
            "tenant id in the notify URL must match " + TenantIds.PATTERN.pattern());
      }
      return tenantId;
    }
    int space = routeKey.indexOf(' ');
    String routePath = space > 0 ? routeKey.substring(space + 1) : "";
    if (routePath.equals("/wechatpay/notify")
        || routePath.equals("/wechatpay/notify/{tenantId}")
        || routePath.equals("/wechatpay/notify/provider/{spMchid}")
        || routePath.equals("/wechatpay/refund-notify/{tenantId}")) {
      throw new ApiError(
          405, "METHOD_NOT_ALLOWED", "use POST, not " + routeKey.substring(0, space));
    }
    String path = event.getRawPath() == null ? "" : event.getRawPath().replaceAll("/+$", "");
    throw new ApiError(404, "ROUTE_NOT_FOUND", "no route " + path);
  }

  /**
   * @param body the request's bytes, null if it was refused before they were read; a refusal's log
   *     line names them by length and SHA-256 (to match a sender's copy), never by their content
   * @param kind "payment" or "refund", for the log line
   */
  private static APIGatewayV2HTTPResponse failure(
      RuntimeException e, String requestId, byte[] body, String kind) {
    int status = statusOf(e);
    if (status >= 500) {
      log.error("{} notification failed (request {}); WeChat will retry", kind, requestId, e);
    } else {
      log.warn(
          "{} notification refused with {} (request {}, {}): {}",
          kind,
          status,
          requestId,
          body == null ? "body not read" : NotificationLimits.fingerprint(body),
          e.getMessage());
    }
    // 5xx: fixed text and the request id, never the exception's (a JDBC or Redis message names
    // hosts, users and SQL); the log above has it, under the same request id
    String message =
        status == 500
            ? "internal error; request " + requestId
            : status >= 500
                ? "temporarily unavailable, retry later; request " + requestId
                : e instanceof InvalidNotificationException invalid
                    ? invalid.publicMessage()
                    : e.getMessage();
    return APIGatewayV2HTTPResponse.builder()
        .withStatusCode(status)
        .withHeaders(Map.of("content-type", "application/json; charset=utf-8"))
        .withBody(Json.write(Json.object().put("code", "FAIL").put("message", message)))
        .build();
  }

  static int statusOf(RuntimeException e) {
    if (e instanceof InvalidNotificationException invalid) {
      return switch (invalid.reason()) {
        case BAD_SIGNATURE, UNKNOWN_SERIAL, UNKNOWN_TENANT, STALE_TIMESTAMP -> 401;
        case MERCHANT_MISMATCH -> 403;
        case BODY_TOO_LARGE -> 413;
        case MALFORMED, INVALID_TIMESTAMP, DECRYPTION_FAILED -> 400;
      };
    }
    if (e instanceof PaymentMismatchException mismatch) {
      return mismatch.kind() == PaymentMismatchException.Kind.UNKNOWN_ORDER ? 404 : 400;
    }
    if (e instanceof ReplayedNotificationException) {
      return 409;
    }
    if (e instanceof ApiError api) {
      return api.status();
    }
    if (e instanceof DataAccessException
        || e instanceof PaymentTransientException
        || e instanceof io.lettuce.core.RedisException) {
      return 503;
    }
    return 500;
  }

  /**
   * Lambda init: one set of clients per execution environment, built when the class is first used.
   */
  private static final class Init {
    static final PaymentWebhook WEBHOOK = Components.fromEnvironment().paymentWebhook();
  }
}
