package io.ordertimeout.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PristineDataDirTest {

  @TempDir Path root;

  @Test
  void aKeptInstallIsCopiedWholeIntoAnEmptyDataDir() throws IOException {
    Path binaries = Files.createDirectories(root.resolve("mariadb-11.4"));
    Path installed = installed(root.resolve("proc-1/data"));
    PristineDataDir pristine = PristineDataDir.of(binaries, List.of("--no-defaults"));

    assertThat(pristine.copyTo(Files.createDirectories(root.resolve("proc-0/data")))).isFalse();
    pristine.keep(installed);
    pristine.keep(installed); // a second JVM finding it kept changes nothing
    Path copy = Files.createDirectories(root.resolve("proc-2/data"));

    assertThat(pristine.copyTo(copy)).isTrue();
    assertThat(files(copy)).isEqualTo(files(installed));
    assertThat(Files.readString(copy.resolve("mysql/user.MAI"))).isEqualTo("grant tables");
    assertThat(Files.size(copy.resolve("ib_logfile0"))).isEqualTo(4096);
    assertNoStagingLeft();
  }

  @Test
  void aNameAlreadyTakenLeavesNoStagingBehindAndTheNextStartInstalls() throws IOException {
    Path binaries = Files.createDirectories(root.resolve("mariadb-11.4"));
    PristineDataDir pristine = PristineDataDir.of(binaries, List.of("--no-defaults"));
    Files.createDirectories(pristine.dir());
    Files.writeString(pristine.dir().resolve("left-by-hand"), "x");

    pristine.keep(installed(root.resolve("proc-1/data")));

    assertThat(pristine.copyTo(Files.createDirectories(root.resolve("proc-2/data")))).isFalse();
    assertNoStagingLeft();
  }

  @Test
  void aCopyWithoutItsMarkerIsHalfWrittenAndNotUsed() throws IOException {
    Path binaries = Files.createDirectories(root.resolve("mariadb-11.4"));
    PristineDataDir pristine = PristineDataDir.of(binaries, List.of("--no-defaults"));
    installed(pristine.dir());

    Path dataDir = Files.createDirectories(root.resolve("proc-1/data"));
    assertThat(pristine.copyTo(dataDir)).isFalse();
    assertThat(files(dataDir)).isEmpty();
  }

  @Test
  void otherInstallArgumentsOrBinariesKeepAnotherCopy() {
    Path binaries = root.resolve("mariadb-11.4");
    PristineDataDir plain = PristineDataDir.of(binaries, List.of("--no-defaults"));

    assertThat(PristineDataDir.of(binaries, List.of("--no-defaults")).dir()).isEqualTo(plain.dir());
    assertThat(PristineDataDir.of(binaries, List.of("--no-defaults", "--user=root")).dir())
        .isNotEqualTo(plain.dir());
    assertThat(PristineDataDir.of(root.resolve("mariadb-11.8"), List.of("--no-defaults")).dir())
        .isNotEqualTo(plain.dir());
    assertThat(plain.dir().getParent()).isEqualTo(root);
  }

  private void assertNoStagingLeft() throws IOException {
    try (Stream<Path> siblings = Files.list(root)) {
      assertThat(siblings.map(p -> p.getFileName().toString()))
          .noneMatch(name -> name.contains(".tmp-"));
    }
  }

  private static Path installed(Path dataDir) throws IOException {
    Files.createDirectories(dataDir.resolve("mysql"));
    Files.writeString(dataDir.resolve("mysql/user.MAI"), "grant tables");
    Files.write(dataDir.resolve("ib_logfile0"), new byte[4096]);
    return dataDir;
  }

  private static List<String> files(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      return paths
          .filter(Files::isRegularFile)
          .map(p -> dir.relativize(p).toString())
          .sorted()
          .toList();
    }
  }
}
