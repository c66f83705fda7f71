package io.ordertimeout.embedded.wechat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * JDK {@link HttpServer}s that answer kept-alive connections without Nagle's delay: the WeChat Pay
 * simulator's and the local stack's API server (infra/local) are both made here.
 *
 * <p>The JDK server writes a response's headers and its body in two writes. With Nagle's algorithm
 * on (the JDK's default) the body waits until the client has ACKed the headers, and the client
 * delays that ACK by 40 ms (Linux's delayed ACK) because it is still waiting for the body. Every
 * request after the first on a kept-alive connection took 44 ms (three GETs with curl: 1.7, 44, 44
 * ms) and one connection placed 22 orders/s. TCP_NODELAY on the accepted sockets sends the body at
 * once.
 *
 * <p>The JDK reads {@value #NODELAY} once per JVM, when the first JDK HttpServer is created
 * (sun.net.httpserver.ServerConfig's static initializer), and offers no per-server or per-socket
 * setting; so it is set here, before any server of this project is created. A JDK HttpServer
 * created elsewhere earlier in the same JVM without it fixes it to false for every later server.
 */
public final class HttpServers {
  /** The JDK server's switch for TCP_NODELAY on every accepted connection. */
  public static final String NODELAY = "sun.net.httpserver.nodelay";

  private HttpServers() {}

  /** {@link HttpServer#create(InetSocketAddress, int)} with TCP_NODELAY on accepted sockets. */
  public static HttpServer create(InetSocketAddress address, int backlog) throws IOException {
    System.setProperty(NODELAY, "true");
    return HttpServer.create(address, backlog);
  }
}
