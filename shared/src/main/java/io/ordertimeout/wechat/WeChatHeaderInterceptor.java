package io.ordertimeout.wechat;

import com.wechat.pay.java.core.http.Constant;
import java.io.IOException;
import java.util.List;
import okhttp3.Headers;
import okhttp3.Interceptor;
import okhttp3.Response;

/**
 * Makes responses readable by the SDK, which looks headers up in a case-sensitive map under the
 * exact names "Wechatpay-Timestamp", "Request-ID", ... while HTTP header names are
 * case-insensitive: over HTTP/2 they all arrive lower-case, and the JDK HttpServer behind the
 * simulator sends "Wechatpay-timestamp". Without this, every response fails validation
 * ("timestamp[null] invalid").
 *
 * <p>It also turns a 202 that carries an error body (APIv3 documents "202 USERPAYING") into a 400:
 * the SDK treats every 2xx as success, and a close that WeChat did not perform must not read as
 * CLOSED.
 */
final class WeChatHeaderInterceptor implements Interceptor {

  private static final List<String> CANONICAL =
      List.of(
          Constant.REQUEST_ID,
          Constant.WECHAT_PAY_SERIAL,
          Constant.WECHAT_PAY_SIGNATURE,
          Constant.WECHAT_PAY_TIMESTAMP,
          Constant.WECHAT_PAY_NONCE,
          "Wechatpay-Signature-Type");
  private static final int PEEK_BYTES = 4096;

  @Override
  public Response intercept(Chain chain) throws IOException {
    Response response = chain.proceed(chain.request());
    Response.Builder fixed = response.newBuilder().headers(canonical(response.headers()));
    if (response.code() == 202 && response.peekBody(PEEK_BYTES).string().contains("\"code\"")) {
      fixed.code(400);
    }
    return fixed.build();
  }

  private static Headers canonical(Headers headers) {
    Headers.Builder builder = new Headers.Builder();
    for (int i = 0; i < headers.size(); i++) {
      builder.add(canonicalName(headers.name(i)), headers.value(i));
    }
    return builder.build();
  }

  private static String canonicalName(String name) {
    for (String canonical : CANONICAL) {
      if (canonical.equalsIgnoreCase(name)) {
        return canonical;
      }
    }
    return name;
  }
}
