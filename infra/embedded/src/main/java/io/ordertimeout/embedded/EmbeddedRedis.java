package io.ordertimeout.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.embedded.RedisServer;

/**
 * One embedded redis-server process on a fixed loopback port. Stopping and starting again keeps the
 * port (clients reconnect to the same URI) and loses all data, which is what the Redis-loss fault
 * tests need.
 */
final class EmbeddedRedis {

  private static final Logger log = LoggerFactory.getLogger(EmbeddedRedis.class);
  private static final int START_ATTEMPTS = 3;

  private final int port;
  private RedisServer server;

  private EmbeddedRedis(int port) {
    this.port = port;
  }

  /** Starts on a free port, picking another one if the chosen port was taken in the meantime. */
  static EmbeddedRedis startOnFreePort() {
    IllegalStateException failure = null;
    for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
      EmbeddedRedis redis = new EmbeddedRedis(FreePorts.pick());
      try {
        redis.start();
        return redis;
      } catch (IllegalStateException e) {
        failure = failure == null ? e : failure;
        log.warn(
            "embedded Redis failed to start on port {} (attempt {}/{})",
            redis.port,
            attempt,
            START_ATTEMPTS,
            e);
      }
    }
    throw failure;
  }

  int port() {
    return port;
  }

  synchronized void start() {
    if (server != null && server.isActive()) {
      return;
    }
    long started = System.nanoTime();
    try {
      server = newServer();
      server.start();
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("embedded Redis did not start on 127.0.0.1:" + port, e);
    }
    log.info(
        "embedded Redis started on 127.0.0.1:{} in {} ms",
        port,
        (System.nanoTime() - started) / 1_000_000);
  }

  synchronized void stop() {
    if (server == null || !server.isActive()) {
      return;
    }
    try {
      server.stop();
    } catch (IOException e) {
      throw new UncheckedIOException("embedded Redis on port " + port + " did not stop", e);
    }
  }

  private RedisServer newServer() throws IOException {
    // save "" and appendonly no: no RDB/AOF files, so a restart really starts empty and tests never
    // wait on fsync.
    return RedisServer.newRedisServer()
        .port(port)
        .bind("127.0.0.1")
        .setting("save \"\"")
        .setting("appendonly no")
        .setting("daemonize no")
        .onShutdownForceStop(true)
        .build();
  }
}
