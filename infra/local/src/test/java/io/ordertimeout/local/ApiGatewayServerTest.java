package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.testing.TestStack;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.net.URI;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The local HTTP API server on the wire: its sockets and its /metrics text. */
class ApiGatewayServerTest {

  private static ApiGatewayServer server(Metrics metrics) {
    return new ApiGatewayServer(new RouteTable(List.of()), metrics, () -> false, "127.0.0.1", 0);
  }

  /**
   * Asserted on the socket, not on timings: on the JDK default (Nagle on) every answer after the
   * first on a kept-alive connection waited 40 ms for the client's delayed ACK (curl: 1.7, 44, 44
   * ms; wrk -c1: 22 orders/s).
   */
  @Test
  void keptAliveConnectionsAreAcceptedWithTcpNoDelay() throws Exception {
    try (ApiGatewayServer api = server(new Metrics());
        Socket client = connect(api.baseUrl())) {
      assertThat(get(client, "/metrics")).startsWith("HTTP/1.1 200");
      assertThat(get(client, "/metrics")).startsWith("HTTP/1.1 200"); // the same connection

      assertThat(noDelayOfOpenConnections(api)).isNotEmpty().containsOnly(true);
    }
  }

  /**
   * Seven timers due, two later; the template's timeout-sweep handler, loaded as the local stack's
   * schedule loads it, records the backlog (its context leaves no time for a pass, so it claims
   * nothing) and /metrics shows it as a gauge.
   */
  @Test
  void metricsShowsTheTimerBacklogGaugeTheSweepRecorded() throws Exception {
    try (TestStack stack = TestStack.create("metrics");
        ApiGatewayServer api = server(stack.app().metrics());
        Socket client = connect(api.baseUrl())) {
      long now = stack.app().time().nowMillis();
      for (int i = 0; i < 7; i++) {
        stack.app().timers().schedule("due-" + i, now - 60_000);
      }
      for (int i = 0; i < 2; i++) {
        stack.app().timers().schedule("later-" + i, now + 600_000);
      }

      SamTemplate.Function sweep =
          SamTemplate.read(Main.templatePath()).functions().stream()
              .filter(f -> f.logicalId().equals("TimeoutSweepFunction"))
              .findFirst()
              .orElseThrow();
      LocalFunction.load(sweep, stack.app())
          .orElseThrow()
          .invoke(new HashMap<>(), new LocalContext(sweep.logicalId(), 0, () -> false));
      String metrics = body(client, "/metrics");

      assertThat(metrics).contains("# TYPE otc_timer_backlog gauge\notc_timer_backlog 7\n");
    }
  }

  private static Socket connect(URI base) throws Exception {
    Socket socket = new Socket();
    socket.connect(new InetSocketAddress(base.getHost(), base.getPort()), 5_000);
    socket.setSoTimeout(5_000);
    return socket;
  }

  private static String get(Socket socket, String path) throws Exception {
    return exchange(socket, path)[0];
  }

  private static String body(Socket socket, String path) throws Exception {
    return exchange(socket, path)[1];
  }

  /** One GET on a kept-alive connection: the status line and the Content-Length body. */
  private static String[] exchange(Socket socket, String path) throws Exception {
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
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring("content-length:".length()).trim());
      }
    }
    char[] body = new char[length];
    for (int read = 0; read < length; ) {
      read += in.read(body, read, length - read);
    }
    return new String[] {status, new String(body)};
  }

  /**
   * TCP_NODELAY of every connection the JDK server holds open. Only its internal classes see the
   * sockets (sun.net.httpserver.ServerImpl.allConnections), opened to tests by the surefire argLine
   * in this module's pom.
   */
  private static List<Boolean> noDelayOfOpenConnections(ApiGatewayServer api) throws Exception {
    Object impl = field(api.httpServer(), "server");
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
