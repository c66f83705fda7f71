package io.ordertimeout.embedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Redis and MySQL servers tests and local runs talk to: one instance per JVM, see {@link
 * #get()}.
 *
 * <p>Each server starts lazily on first use (a Redis-only test never waits for MariaDB) on a free
 * loopback port, or is an external server when {@code OTC_REDIS_URI} / {@code OTC_MYSQL_URL} (+
 * {@code OTC_MYSQL_USER}, {@code OTC_MYSQL_PASSWORD}) are set. Tests isolate themselves with {@link
 * #createSchema} and {@link #newKeyPrefix} rather than by restarting servers, so one pair of
 * servers serves the whole JVM.
 */
public final class EmbeddedServers {

  private static final Logger log = LoggerFactory.getLogger(EmbeddedServers.class);

  /**
   * forceConnectionTimeZoneToSession sets the session time zone to UTC, so NOW(3) in SQL is UTC
   * too.
   */
  static final String JDBC_PARAMETERS =
      "connectionTimeZone=UTC&forceConnectionTimeZoneToSession=true"
          + "&rewriteBatchedStatements=true&useSSL=false&allowPublicKeyRetrieval=true";

  private static final String EMBEDDED_USER = "root";
  private static final String EMBEDDED_PASSWORD = "";
  private static final int HINT_MAX_LENGTH = 40;
  private static final int ADMIN_VALID_SECONDS = 5;

  private static final SecureRandom RANDOM = new SecureRandom();
  private static volatile EmbeddedServers instance;

  private final EmbeddedConfig config;
  private final Path root;
  private final Set<String> issuedPrefixes = ConcurrentHashMap.newKeySet();
  private EmbeddedRedis redis;
  private EmbeddedMariaDb mariaDb;
  private boolean shutDown;
  private final Object adminLock = new Object();
  private Connection admin;

  EmbeddedServers(EmbeddedConfig config, Path root) {
    this.config = config;
    this.root = root;
  }

  /** The JVM's servers; the first call reads the environment and registers the shutdown hook. */
  public static EmbeddedServers get() {
    EmbeddedServers servers = instance;
    if (servers == null) {
      synchronized (EmbeddedServers.class) {
        servers = instance;
        if (servers == null) {
          servers =
              new EmbeddedServers(EmbeddedConfig.fromEnvironment(System.getenv()), defaultRoot());
          Runtime.getRuntime()
              .addShutdownHook(new Thread(servers::shutdown, "otc-embedded-servers-shutdown"));
          instance = servers;
        }
      }
    }
    return servers;
  }

  /** True when both servers are external; then the fault-injection methods are unavailable. */
  public boolean external() {
    return config.externalRedis() && config.externalMysql();
  }

  /**
   * True when OTC_MYSQL_URL points at a server this JVM does not own: tests that stop or restart
   * MariaDB skip (JUnit assumptions) rather than fail.
   */
  public boolean externalMysql() {
    return config.externalMysql();
  }

  // ---- Redis ----

  /** {@code redis://127.0.0.1:PORT} for the embedded server, OTC_REDIS_URI otherwise. */
  public String redisUri() {
    if (config.externalRedis()) {
      return config.redisUri();
    }
    return "redis://127.0.0.1:" + embeddedRedis().port();
  }

  /** A fresh Redis key prefix, {@code t} plus 8 hex digits, never issued before in this JVM. */
  public String newKeyPrefix(String hint) {
    String prefix;
    do {
      prefix = "t" + randomHex();
    } while (!issuedPrefixes.add(prefix));
    log.debug("key prefix {} for {}", prefix, hint);
    return prefix;
  }

  /** Kills the embedded Redis; its data is lost. */
  public void stopRedis() {
    requireEmbedded(config.externalRedis(), "stopRedis", "OTC_REDIS_URI");
    embeddedRedis().stop();
  }

  /** Starts the embedded Redis again on the same port, empty. */
  public void startRedis() {
    requireEmbedded(config.externalRedis(), "startRedis", "OTC_REDIS_URI");
    embeddedRedis().start();
  }

  // ---- MySQL ----

  /**
   * A mysql-connector-j URL for {@code schema}, with UTC sessions and batched-statement rewriting.
   */
  public String jdbcUrl(String schema) {
    return JdbcUrls.forSchema(serverUrl(), schema, JDBC_PARAMETERS);
  }

  public String mysqlUser() {
    return config.externalMysql() ? config.mysqlUser() : EMBEDDED_USER;
  }

  public String mysqlPassword() {
    if (config.externalMysql()) {
      return config.mysqlPassword() == null ? "" : config.mysqlPassword();
    }
    return EMBEDDED_PASSWORD;
  }

  /**
   * Creates a fresh database {@code otc_<hint>_<8 hex>} (utf8mb4, utf8mb4_bin) and returns its
   * name.
   */
  public String createSchema(String hint) {
    String name = "otc_" + sanitize(hint) + "_" + randomHex();
    executeOnServer(
        "CREATE DATABASE `" + name + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", name);
    return name;
  }

  public void dropSchema(String name) {
    if (!name.matches("[A-Za-z0-9_]+")) {
      throw new IllegalArgumentException(
          "refusing to drop schema with unexpected name '" + name + "'");
    }
    executeOnServer("DROP DATABASE IF EXISTS `" + name + "`", name);
  }

  /** Stops and starts the embedded MariaDB on the same port; committed data survives. */
  public void restartMariaDb() {
    requireEmbedded(config.externalMysql(), "restartMariaDb", "OTC_MYSQL_URL");
    long started = System.nanoTime();
    embeddedMariaDb().restart();
    log.info("embedded MariaDB restarted in {} ms", (System.nanoTime() - started) / 1_000_000);
  }

  // ---- internals ----

  private String serverUrl() {
    if (config.externalMysql()) {
      return config.mysqlUrl();
    }
    return "jdbc:mysql://127.0.0.1:" + embeddedMariaDb().port() + "/";
  }

  /**
   * Runs a schema's CREATE or DROP on one connection kept for the JVM: opening a Connector/J
   * connection for each took more of the test JVMs' CPU than the statements. A connection that is
   * no longer valid (the server restarted) is replaced before use; none is retried after a failure,
   * so a statement never runs twice.
   */
  private void executeOnServer(String sql, String schema) {
    // before adminLock: jdbcUrl takes this object's monitor, so the two are never taken in turn
    String url = jdbcUrl("");
    synchronized (adminLock) {
      try {
        if (admin == null || !admin.isValid(ADMIN_VALID_SECONDS)) {
          closeAdmin();
          admin = DriverManager.getConnection(url, mysqlUser(), mysqlPassword());
        }
        try (Statement statement = admin.createStatement()) {
          statement.execute(sql);
        }
      } catch (SQLException e) {
        closeAdmin();
        throw new IllegalStateException(
            "could not run '" + sql + "' for schema " + schema + " on " + serverUrl(), e);
      }
    }
  }

  private void closeAdmin() {
    synchronized (adminLock) {
      if (admin != null) {
        try {
          admin.close();
        } catch (SQLException e) {
          log.debug("closing the schema connection failed", e);
        }
        admin = null;
      }
    }
  }

  private synchronized EmbeddedRedis embeddedRedis() {
    checkNotShutDown();
    if (redis == null) {
      redis = EmbeddedRedis.startOnFreePort();
    }
    return redis;
  }

  private synchronized EmbeddedMariaDb embeddedMariaDb() {
    checkNotShutDown();
    if (mariaDb == null) {
      deleteStaleProcessDirs();
      Path binaries = MariaDbBinaries.ensureUnpacked(root);
      mariaDb = EmbeddedMariaDb.start(binaries, EmbeddedMariaDb.processDir(root), FreePorts.pick());
    }
    return mariaDb;
  }

  /** Stops both servers and deletes MariaDB's data dir; runs from the shutdown hook. */
  synchronized void shutdown() {
    shutDown = true;
    if (redis != null) {
      redis.stop();
    }
    if (mariaDb != null) {
      mariaDb.shutdown();
    }
  }

  private void checkNotShutDown() {
    if (shutDown) {
      throw new IllegalStateException(
          "embedded servers under " + root + " are already shut down (JVM exiting?)");
    }
  }

  /**
   * Data dirs of JVMs that were killed (kill -9, IDE stop) would otherwise pile up at ~200 MB each.
   */
  private void deleteStaleProcessDirs() {
    try (Stream<Path> dirs = Files.exists(root) ? Files.list(root) : Stream.empty()) {
      dirs.filter(dir -> dir.getFileName().toString().matches("proc-\\d+"))
          .filter(
              dir ->
                  ProcessHandle.of(Long.parseLong(dir.getFileName().toString().substring(5)))
                      .isEmpty())
          .forEach(EmbeddedServers::deleteQuietly);
    } catch (IOException e) {
      log.warn("could not list {} to clean up stale MariaDB data dirs", root, e);
    }
  }

  private static void deleteQuietly(Path dir) {
    try {
      MariaDbBinaries.deleteTree(dir);
      log.info("deleted stale MariaDB data dir {}", dir);
    } catch (IOException e) {
      log.warn("could not delete stale MariaDB data dir {}", dir, e);
    }
  }

  private static void requireEmbedded(boolean external, String operation, String variable) {
    if (external) {
      throw new UnsupportedOperationException(
          operation
              + " needs the embedded server, but "
              + variable
              + " points at an external one; fault tests cannot stop a server they do not own");
    }
  }

  static String sanitize(String hint) {
    String cleaned =
        (hint == null ? "" : hint).toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_");
    cleaned = cleaned.replaceAll("^_+|_+$", "");
    if (cleaned.isEmpty()) {
      return "schema";
    }
    // MySQL names stop at 64 characters: otc_ (4) + hint (40) + _ (1) + hex (8) = 53.
    return cleaned.length() > HINT_MAX_LENGTH ? cleaned.substring(0, HINT_MAX_LENGTH) : cleaned;
  }

  private static String randomHex() {
    byte[] bytes = new byte[4];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  private static Path defaultRoot() {
    return Path.of(System.getProperty("java.io.tmpdir"), "otc-embedded");
  }
}
