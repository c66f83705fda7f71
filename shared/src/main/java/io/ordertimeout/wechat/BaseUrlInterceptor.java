package io.ordertimeout.wechat;

import java.io.IOException;
import java.net.URI;
import okhttp3.HttpUrl;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Sends every SDK request to another base URL (the simulator) by rewriting scheme, host and port.
 * The SDK signs path and query only, so the Authorization header stays valid.
 */
final class BaseUrlInterceptor implements Interceptor {

  private final HttpUrl base;

  BaseUrlInterceptor(URI baseUrl) {
    HttpUrl parsed = HttpUrl.get(baseUrl.toString());
    this.base = parsed;
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    HttpUrl target =
        request
            .url()
            .newBuilder()
            .scheme(base.scheme())
            .host(base.host())
            .port(base.port())
            .build();
    return chain.proceed(request.newBuilder().url(target).build());
  }
}
