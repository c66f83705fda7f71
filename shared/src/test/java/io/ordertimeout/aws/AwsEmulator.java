package io.ordertimeout.aws;

import io.ordertimeout.testing.Await;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.localstack.LocalStackContainer;
import org.testcontainers.utility.DockerImageName;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/**
 * An AWS API emulator for the tests, the same test code for both: LocalStack through Testcontainers
 * when Docker runs, else {@code moto_server} when it is on the PATH, else the test is skipped (a
 * JUnit assumption with the reason). The SDK is pointed at {@link #endpoint()} with dummy
 * credentials.
 */
final class AwsEmulator implements AutoCloseable {
  static final String REGION = "us-east-1";
  static final AwsCredentialsProvider CREDENTIALS =
      StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test"));

  /** moto_server starts in ~1-2 s here; 30 s allows a cold Python import on a loaded CI box. */
  private static final Duration STARTUP = Duration.ofSeconds(30);

  private final String name;
  private final URI endpoint;
  private final AutoCloseable stop;

  private AwsEmulator(String name, URI endpoint, AutoCloseable stop) {
    this.name = name;
    this.endpoint = endpoint;
    this.stop = stop;
  }

  /** Starts LocalStack or moto_server, or aborts the calling test with the reason. */
  static AwsEmulator start() {
    if (dockerAvailable()) {
      return localStack();
    }
    Path moto = onPath("moto_server");
    Assumptions.assumeTrue(
        moto != null,
        "AWS emulator tests skipped: no Docker for LocalStack and no moto_server on the PATH"
            + " (pip install 'moto[server]')");
    return moto(moto);
  }

  URI endpoint() {
    return endpoint;
  }

  String name() {
    return name;
  }

  private static boolean dockerAvailable() {
    // ask Testcontainers only when a daemon may be there: its probe logs an ERROR when none is
    if (System.getenv("DOCKER_HOST") == null && !Files.exists(Path.of("/var/run/docker.sock"))) {
      return false;
    }
    try {
      return DockerClientFactory.instance().isDockerAvailable();
    } catch (RuntimeException | LinkageError e) {
      return false;
    }
  }

  private static AwsEmulator localStack() {
    LocalStackContainer container =
        new LocalStackContainer(DockerImageName.parse("localstack/localstack:4.6"))
            .withServices(LocalStackContainer.Service.SECRETSMANAGER);
    container.start();
    return new AwsEmulator("LocalStack", container.getEndpoint(), container::stop);
  }

  private static AwsEmulator moto(Path executable) {
    int port = freePort();
    Process process;
    try {
      process =
          new ProcessBuilder(executable.toString(), "-H", "127.0.0.1", "-p", String.valueOf(port))
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start " + executable + " on port " + port, e);
    }
    AutoCloseable stop = () -> stopProcess(process);
    awaitListening(process, port);
    return new AwsEmulator("moto_server", URI.create("http://127.0.0.1:" + port), stop);
  }

  private static void awaitListening(Process process, int port) {
    boolean listening =
        Await.reached(
            Await.await("moto_server listening on " + port, STARTUP)
                .pollInterval(Duration.ofMillis(100)),
            () -> {
              if (!process.isAlive()) {
                throw new IllegalStateException(
                    "moto_server exited with "
                        + process.exitValue()
                        + " before listening on "
                        + port);
              }
              try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return true;
              } catch (IOException notYet) {
                return false;
              }
            });
    if (listening) {
      return;
    }
    stopProcess(process);
    throw new IllegalStateException("moto_server did not listen on " + port + " in " + STARTUP);
  }

  private static void stopProcess(Process process) {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }

  static Path onPath(String command) {
    String path = System.getenv("PATH");
    if (path == null) {
      return null;
    }
    for (String dir : path.split(File.pathSeparator)) {
      Path candidate = Path.of(dir, command);
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException("no free loopback port", e);
    }
  }

  @Override
  public void close() throws Exception {
    stop.close();
  }
}
