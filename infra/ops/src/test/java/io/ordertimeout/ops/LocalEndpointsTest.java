package io.ordertimeout.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.Resources;

/** The endpoints file ./local up writes and ./ops admin, ./local wechat and tenant read. */
// one at a time with other classes that set system properties (the fast tier runs classes in
// parallel): it sets the AWS SDK's credentials or the template's path for a while
@ResourceLock(Resources.SYSTEM_PROPERTIES)
class LocalEndpointsTest {
  @TempDir Path dir;

  @Test
  void whatIsWrittenIsReadBackAndOnlyItsWriterDeletesIt() throws IOException {
    Path file = dir.resolve("target/local-up.json");
    LocalEndpoints mine =
        new LocalEndpoints(
            URI.create("http://127.0.0.1:8080"),
            URI.create("http://127.0.0.1:40123"),
            ProcessHandle.current().pid(),
            Instant.parse("2026-12-04T01:55:00Z"));
    LocalEndpoints other =
        new LocalEndpoints(mine.api(), mine.simulator(), mine.pid() + 1_000_000, mine.startedAt());

    mine.write(file);

    assertThat(Files.readString(file))
        .contains("\"wechatControl\" : \"http://127.0.0.1:40123/_sim\"");
    assertThat(LocalEndpoints.read(file)).contains(mine);
    assertThat(LocalEndpoints.running(file, "", "")).isEqualTo(mine);
    other.write(file);
    LocalEndpoints.deleteIfOurs(file);
    assertThat(file).exists();
    mine.write(file);
    LocalEndpoints.deleteIfOurs(file);
    assertThat(file).doesNotExist();
    assertThat(LocalEndpoints.read(file)).isEmpty();
  }

  @Test
  void aFileThatIsNotOneIsRefusedWithItsPath() throws IOException {
    Path file = dir.resolve("local-up.json");
    Files.writeString(file, "{\"api\":\"http://x\"}");

    assertThatThrownBy(() -> LocalEndpoints.read(file))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("cannot read " + file + " (")
        .hasMessageEndingWith("); delete it and start ./local up again");
  }

  @Test
  void theDefaultFileIsUnderTheDirectoryOfTheTemplate() {
    String before = System.getProperty("otc.template");
    System.setProperty("otc.template", dir.resolve("template.yaml").toString());
    try {
      assertThat(LocalEndpoints.defaultFile())
          .isEqualTo(dir.toAbsolutePath().resolve("infra/local/target/local-up.json"));
    } finally {
      if (before == null) {
        System.clearProperty("otc.template");
      } else {
        System.setProperty("otc.template", before);
      }
    }
    // from infra/ops, the repository root is two directories up
    assertThat(LocalEndpoints.defaultFile())
        .isEqualTo(Path.of("../..").toAbsolutePath().normalize().resolve(LocalEndpoints.FILE));
  }
}
