package io.ordertimeout.embedded.wechat;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.net.URI;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The simulator's server sends its answers without Nagle's delay: the connection it accepted for a
 * kept-alive request has TCP_NODELAY set. Asserted on the socket itself, not on timings (on the JDK
 * default, Nagle on, every answer after the first on a connection took 44 ms on loopback).
 */
class HttpServersTest {

  @Test
  void theSimulatorsAcceptedConnectionsHaveTcpNoDelay() throws Exception {
    try (WeChatPaySimulator wechat = WeChatPaySimulator.start();
        Socket client = new Socket()) {
      URI base = wechat.baseUrl();
      client.connect(new java.net.InetSocketAddress(base.getHost(), base.getPort()), 5_000);
      client.setSoTimeout(5_000);
      // two requests on one kept-alive connection, as the SDK's OkHttp pool sends them
      assertThat(get(client, "/v3/pay/transactions/out-trade-no/X1")).startsWith("HTTP/1.1 401");
      assertThat(get(client, "/v3/pay/transactions/out-trade-no/X2")).startsWith("HTTP/1.1 401");

      assertThat(noDelayOfOpenConnections(wechat.httpServer())).isNotEmpty().containsOnly(true);
    }
  }

  /** Sends one GET and reads its answer to the end of its Content-Length body. */
  static String get(Socket socket, String path) throws Exception {
    OutputStream out = socket.getOutputStream();
    out.write(
        ("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
    out.flush();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
    String status = in.readLine();
    int length = 0;
    for (String line = in.readLine(); !line.isEmpty(); line = in.readLine()) {
      if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring("content-length:".length()).trim());
      }
    }
    char[] body = new char[length];
    for (int read = 0; read < length; ) {
      read += in.read(body, read, length - read);
    }
    return status;
  }

  /**
   * TCP_NODELAY of every connection the JDK server holds open. Only its internal classes see the
   * sockets (sun.net.httpserver.ServerImpl.allConnections), opened to tests by the surefire argLine
   * in this module's pom.
   */
  static List<Boolean> noDelayOfOpenConnections(HttpServer server) throws Exception {
    Object impl = field(server, "server");
    Set<?> connections = (Set<?>) field(impl, "allConnections");
    List<Boolean> noDelay = new ArrayList<>();
    synchronized (connections) {
      for (Object connection : connections) {
        SocketChannel channel = (SocketChannel) field(connection, "chan");
        noDelay.add(channel.getOption(StandardSocketOptions.TCP_NODELAY));
      }
    }
    return noDelay;
  }

  private static Object field(Object target, String name) throws Exception {
    Field f = target.getClass().getDeclaredField(name);
    f.setAccessible(true);
    return f.get(target);
  }
}
