package io.ordertimeout.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.metrics.Metrics;
import io.ordertimeout.testing.TestStack;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.InputStream;
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
        stack
            .app()
            .timers()
            .schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, "due-" + i, now - 60_000);
      }
      for (int i = 0; i < 2; i++) {
        stack
            .app()
            .timers()
            .schedule(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, "later-" + i, now + 600_000);
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

  /**
   * One GET on a kept-alive connection: the status line and the body (Content-Length or chunked).
   * Reads the socket's raw stream byte by byte, so nothing of a later response is buffered away and
   * lost between two exchanges on the same connection.
   */
  private static String[] exchange(Socket socket, String path) throws Exception {
    OutputStream out = socket.getOutputStream();
    out.write(
        ("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
    out.flush();
    InputStream in = socket.getInputStream();
    String status = line(in);
    int length = 0;
    boolean chunked = false;
    for (String line = line(in); !line.isEmpty(); line = line(in)) {
      String lower = line.toLowerCase(Locale.ROOT);
      if (lower.startsWith("content-length:")) {
        length = Integer.parseInt(line.substring("content-length:".length()).trim());
      } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
        chunked = true;
      }
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if (chunked) {
      for (int size = Integer.parseInt(line(in).trim(), 16); size > 0; ) {
        body.write(in.readNBytes(size));
        line(in); // the CRLF after the chunk
        size = Integer.parseInt(line(in).trim(), 16);
      }
      line(in); // the CRLF after the last (empty) chunk
    } else {
      body.write(in.readNBytes(length));
    }
    return new String[] {status, body.toString(StandardCharsets.UTF_8)};
  }

  /** One CRLF-terminated line of the response head, without the CRLF. */
  private static String line(InputStream in) throws Exception {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    for (int b = in.read(); b != '\n'; b = in.read()) {
      if (b < 0) {
        throw new EOFException("connection closed mid-line: " + line);
      }
      if (b != '\r') {
        line.write(b);
      }
    }
    return line.toString(StandardCharsets.US_ASCII);
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
