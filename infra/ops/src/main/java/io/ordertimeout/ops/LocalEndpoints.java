package io.ordertimeout.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.Optional;

/**
 * Where a running {@code ./local up} listens, in {@value #FILE} next to the build: the simulator
 * takes a free port at every start, and {@code ./local wechat}, {@code ./local tenant} and {@code
 * ./ops admin} find it here. The file names the process that wrote it, so a file left by a killed
 * stack is recognised as stale. {@code ./local up} writes it; this module only reads it, so {@code
 * ./ops} needs nothing of the local stack on its classpath.
 *
 * @param api the HTTP API, e.g. http://127.0.0.1:8080
 * @param simulator the WeChat Pay simulator, e.g. http://127.0.0.1:40123
 * @param pid the process of that {@code ./local up}
 */
public record LocalEndpoints(URI api, URI simulator, long pid, Instant startedAt) {

  /** Relative to the directory of template.yaml, the repository root. */
  public static final String FILE = "infra/local/target/local-up.json";

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  /**
   * {@value #FILE} under the repository root: the directory of {@code -Dotc.template} (set by
   * {@code ./local} and {@code ./ops}), else the first directory above the working one that holds
   * template.yaml, else the working directory.
   */
  public static Path defaultFile() {
    String configured = System.getProperty("otc.template");
    Path root = null;
    if (configured != null) {
      root = Path.of(configured).toAbsolutePath().getParent();
    }
    for (Path dir = Path.of("").toAbsolutePath(); root == null && dir != null; ) {
      if (Files.isRegularFile(dir.resolve("template.yaml"))) {
        root = dir;
      }
      dir = dir.getParent();
    }
    return (root == null ? Path.of("").toAbsolutePath() : root).resolve(FILE);
  }

  /** Written whole to a sibling and moved into place, so a reader never sees half a file. */
  public void write(Path file) {
    String text =
        JSON.createObjectNode()
                .put("api", api.toString())
                .put("wechatSimulator", simulator.toString())
                .put("wechatControl", simulator + "/_sim")
                .put("pid", pid)
                .put("startedAt", startedAt.toString())
                .toPrettyString()
            + "\n";
    try {
      Path target = file.toAbsolutePath();
      Path directory = target.getParent();
      if (directory != null) {
        Files.createDirectories(directory);
      }
      Path temp = target.resolveSibling(target.getFileName() + ".tmp");
      Files.writeString(temp, text, StandardCharsets.UTF_8);
      Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("could not write the local stack's endpoints to " + file, e);
    }
  }

  /** Empty when there is no file; a file that is not ours to read fails with its path. */
  public static Optional<LocalEndpoints> read(Path file) {
    if (!Files.isRegularFile(file)) {
      return Optional.empty();
    }
    try {
      JsonNode node = JSON.readTree(Files.readString(file, StandardCharsets.UTF_8));
      return Optional.of(
          new LocalEndpoints(
              URI.create(node.path("api").asText()),
              URI.create(node.path("wechatSimulator").asText()),
              node.path("pid").asLong(),
              Instant.parse(node.path("startedAt").asText())));
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException(
          "cannot read " + file + " (" + e + "); delete it and start ./local up again", e);
    }
  }

  /** Removes the file when this process wrote it: a second stack's file is not ours to delete. */
  public static void deleteIfOurs(Path file) {
    try {
      if (read(file).map(e -> e.pid() == ProcessHandle.current().pid()).orElse(false)) {
        Files.deleteIfExists(file);
      }
    } catch (IOException | IllegalStateException e) {
      // stopping anyway; a stale file is recognised by its dead pid
    }
  }

  /**
   * What a still-running {@code ./local up} recorded in {@code file}; the commands that talk to it
   * (admin, tenant, wechat) say the same when it is missing or gone, each with its own way out.
   *
   * @param missingHint appended to "start ./local up" when no file exists
   * @param deadHint appended to "start ./local up again" when its writer no longer runs
   * @throws IllegalStateException with the message to print
   */
  public static LocalEndpoints running(Path file, String missingHint, String deadHint) {
    LocalEndpoints endpoints =
        read(file)
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "no running ./local up found ("
                            + file
                            + " does not exist); start ./local up"
                            + missingHint));
    if (!endpoints.writerAlive()) {
      throw new IllegalStateException(
          "the ./local up that wrote "
              + file
              + " (pid "
              + endpoints.pid()
              + ") is no longer running; start ./local up again"
              + deadHint);
    }
    return endpoints;
  }

  public boolean writerAlive() {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }
}
