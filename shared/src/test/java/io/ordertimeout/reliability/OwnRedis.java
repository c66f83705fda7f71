package io.ordertimeout.reliability;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.ordertimeout.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import redis.embedded.RedisServer;

/**
 * A redis-server process of the fault tests' own (the embedded-redis binary), so their restarts and
 * outages never reach the JVM-shared server other test classes use. It keeps its port across
 * restarts; {@link #kill()} loses the data, {@link #shutdownSaving()} keeps it (RDB in a temp dir).
 */
final class OwnRedis implements AutoCloseable {
  private final int port;
  private final Path dir;
  private final Integer primaryPort;
  private RedisServer server;

  private OwnRedis(int port, Path dir, Integer primaryPort) {
    this.port = port;
    this.dir = dir;
    this.primaryPort = primaryPort;
  }

  static OwnRedis start() {
    return start(null);
  }

  /**
   * A replica of the Redis on {@code primaryPort} (an ElastiCache replica node): it starts with
   * {@code replicaof}, read-only, and becomes a primary on {@code REPLICAOF NO ONE}.
   */
  static OwnRedis startReplicaOf(int primaryPort) {
    return start(primaryPort);
  }

  private static OwnRedis start(Integer primaryPort) {
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      OwnRedis redis =
          new OwnRedis(probe.getLocalPort(), Files.createTempDirectory("otc-fault-"), primaryPort);
      probe.close();
      redis.startAgain();
      return redis;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start the fault tests' own Redis", e);
    }
  }

  String uri() {
    return "redis://127.0.0.1:" + port;
  }

  int port() {
    return port;
  }

  /** Starts on the same port; with the RDB file of a {@link #shutdownSaving()} if there is one. */
  synchronized void startAgain() {
    if (server != null && server.isActive()) {
      return; // still running (a test's finally after a fault that never stopped it)
    }
    try {
      if (server != null) {
        // The same server object again, not a new build(): each build() wrote a fresh 9.3 MB
        // redis-server binary to a new temp dir, and each start() registers a JVM shutdown hook
        // holding its server and that server's Process (~10 KB of heap) until exit; the soak's
        // 40 restarts in 30 minutes left 40 of each. Now the hooks (~0.3 KB each) all hold this
        // one server, whose Process is the current one. A start after stop() runs a new process.
        server.start();
        return;
      }
      var builder =
          RedisServer.newRedisServer()
              .port(port)
              .bind("127.0.0.1")
              .setting("dir " + dir)
              .setting("save \"\"")
              .setting("appendonly no")
              .setting("daemonize no")
              // a full sync streams the RDB over the socket: no dump file a kill() would delete
              .setting("repl-diskless-sync yes")
              .setting("repl-diskless-sync-delay 0");
      if (primaryPort != null) {
        builder.setting("replicaof 127.0.0.1 " + primaryPort);
      }
      server = builder.onShutdownForceStop(true).build();
      server.start();
    } catch (IOException e) {
      throw new UncheckedIOException("own Redis did not start on port " + port, e);
    }
  }

  /** A crash: the process is stopped and its data is gone. */
  synchronized void kill() {
    try {
      Files.deleteIfExists(dir.resolve("dump.rdb"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete own Redis's dump in " + dir, e);
    }
    stopProcess();
  }

  private void stopProcess() {
    try {
      server.stop();
    } catch (IOException e) {
      throw new UncheckedIOException("own Redis on port " + port + " did not stop", e);
    }
  }

  /** SHUTDOWN SAVE: the process exits after writing its data, the next start reloads it. */
  synchronized void shutdownSaving() {
    RedisClient admin = RedisClient.create(RedisURI.create(uri()));
    try (StatefulRedisConnection<String, String> c = admin.connect()) {
      c.sync().shutdown(true);
    } catch (RuntimeException expected) {
      // the server closes the connection as it exits
    } finally {
      admin.shutdown(Duration.ZERO, Duration.ofSeconds(1));
    }
    // The process is stopped forcibly (onShutdownForceStop), so stopping it while SHUTDOWN SAVE is
    // still writing would lose the data: on a loaded machine the write took long enough that the
    // restarted Redis came back empty and the test's orders were never closed. Wait (10 s at most)
    // until the RDB file is written and the port is closed, i.e. the process has really exited.
    Await.reached(
        Await.await("own Redis saved dump.rdb and exited", Duration.ofSeconds(10)),
        () -> Files.exists(dir.resolve("dump.rdb")) && !portOpen());
    if (!Files.exists(dir.resolve("dump.rdb"))) {
      throw new IllegalStateException("own Redis on port " + port + " wrote no RDB file in 10 s");
    }
    stopProcess(); // the process has exited; its RDB file stays for startAgain()
  }

  private boolean portOpen() {
    try (Socket probe = new Socket()) {
      probe.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
      return true;
    } catch (IOException refused) {
      return false;
    }
  }

  @Override
  public synchronized void close() {
    kill();
  }
}
