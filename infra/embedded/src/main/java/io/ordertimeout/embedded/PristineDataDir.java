package io.ordertimeout.embedded;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * A data directory as {@code mariadb-install-db} leaves it, kept beside the binaries and copied
 * into each process's data dir instead of installing again.
 *
 * <p>Installing the system tables took 1.4 s of wall time on an idle 2-core machine (more while
 * other test JVMs ran), copying the 143 MB it writes 0.15 s; every test JVM and every {@code
 * ./local} start pays it once. The copy is taken right after the install, before any server has run
 * on it. Its name carries a hash of the binaries' directory and the install's arguments, so a
 * changed argument or another MariaDB version installs afresh. Like the binaries, a copy is
 * complete only with its marker file: it is written in a directory of the writer's own and moved
 * into place whole, so concurrent JVMs either find a complete copy or install for themselves.
 */
final class PristineDataDir {

  private static final String MARKER = ".installed-complete";

  private final Path dir;

  private PristineDataDir(Path dir) {
    this.dir = dir;
  }

  /** The copy for these binaries and install arguments: a sibling of the binaries' directory. */
  static PristineDataDir of(Path binaries, List<String> installArguments) {
    String key = binaries.toAbsolutePath() + "\n" + String.join("\n", installArguments);
    return new PristineDataDir(
        binaries.resolveSibling(binaries.getFileName() + "-datadir-" + sha256(key)));
  }

  Path dir() {
    return dir;
  }

  /** Copies the kept data dir into the empty {@code dataDir}; false when none is kept yet. */
  boolean copyTo(Path dataDir) throws IOException {
    if (!Files.exists(dir.resolve(MARKER))) {
      return false;
    }
    copyTree(dir, dataDir);
    Files.deleteIfExists(dataDir.resolve(MARKER));
    return true;
  }

  /** Keeps a copy of {@code installed}, a data dir just installed that no server has run on. */
  void keep(Path installed) throws IOException {
    if (Files.exists(dir.resolve(MARKER))) {
      return;
    }
    Path staging = dir.resolveSibling(dir.getFileName() + ".tmp-" + ProcessHandle.current().pid());
    MariaDbBinaries.deleteTree(staging);
    copyTree(installed, staging);
    Files.createFile(staging.resolve(MARKER));
    try {
      Files.move(staging, dir, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      // Another JVM kept its copy first (installed with the same arguments), or something else
      // holds
      // the name: this process has its own installed data dir either way, so only the staging goes.
      MariaDbBinaries.deleteTree(staging);
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> paths = Files.walk(from)) {
      for (Path source : (Iterable<Path>) paths::iterator) {
        Path target = to.resolve(from.relativize(source).toString());
        if (Files.isDirectory(source)) {
          Files.createDirectories(target);
        } else {
          Files.copy(source, target, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  private static String sha256(String text) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }
}
