package io.ordertimeout.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ordertimeout.embedded.EmbeddedRedisCluster;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS to a Redis Cluster whose topology announces IP addresses, as ElastiCache's can: the
 * certificate names the configured host (here {@code localhost}, ElastiCache's {@code
 * *.<cluster>...cache.amazonaws.com}) and no IP, the nodes are reached at 127.0.0.1. Needs a
 * redis-server built with TLS (Debian's) and openssl on the PATH; skipped with the reason
 * otherwise.
 */
@Tag("integration")
class ClusterTlsTest {
  @TempDir static Path dir;

  private static EmbeddedRedisCluster cluster;
  private static TrustManagerFactory trustTestCa;
  private static int port;

  @BeforeAll
  static void startTlsCluster() throws Exception {
    Path redis = onPath("redis-server");
    Assumptions.assumeTrue(
        redis != null, "no redis-server on the PATH (Debian's is built with TLS): skipped");
    Assumptions.assumeTrue(onPath("openssl") != null, "no openssl on the PATH: skipped");
    Assumptions.assumeTrue(
        run(redis.toString(), "--version").contains("v="), "redis-server does not run: skipped");
    certificates();
    trustTestCa = trust(dir.resolve("ca.crt"));
    cluster =
        EmbeddedRedisCluster.start(
            3,
            new EmbeddedRedisCluster.Tls(
                redis,
                dir.resolve("server.crt"),
                dir.resolve("server.key"),
                dir.resolve("ca.crt")));
    port = cluster.masterPorts().get(0);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void theConfiguredHostNameVerifiesEveryNodeReachedByItsIp() {
    try (RedisConnector redis =
        RedisConnector.connect(
            "rediss://localhost:" + port, true, new RedisSecurity(null, trustTestCa))) {
      // one key per shard hash tag: the 16 timer shards' slots are spread over all three masters
      List<String> values = new ArrayList<>();
      for (int shard = 0; shard < 16; shard++) {
        redis.sync().set("otc:tls:{t" + shard + "}", "v" + shard);
        values.add(redis.sync().get("otc:tls:{t" + shard + "}"));
      }

      assertThat(values).hasSize(16).allMatch(v -> v.startsWith("v"));
      assertThat(redis.sync().clusterNodes())
          .contains("127.0.0.1:" + cluster.masterPorts().get(1))
          .contains("127.0.0.1:" + cluster.masterPorts().get(2));
    }
  }

  @Test
  void anIpAsTheConfiguredHostStillFailsVerification() {
    assertThatThrownBy(
            () ->
                RedisConnector.connect(
                        "rediss://127.0.0.1:" + port, true, new RedisSecurity(null, trustTestCa))
                    .sync()
                    .ping())
        .hasStackTraceContaining("No subject alternative names matching IP address 127.0.0.1");
  }

  @Test
  void aCertificateFromAnUntrustedCaFails() {
    assertThatThrownBy(
            () ->
                RedisConnector.connect(
                        "rediss://localhost:" + port, true, new RedisSecurity(null, null))
                    .sync()
                    .ping())
        .hasStackTraceContaining("PKIX path building failed");
  }

  /** A CA and a server certificate it signed for DNS:localhost only (no IP SAN). */
  private static void certificates() throws Exception {
    Files.writeString(dir.resolve("san.ext"), "subjectAltName=DNS:localhost\n");
    exec(
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-subj",
        "/CN=otc-test-ca");
    exec(
        "openssl",
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=otc-redis");
    exec(
        "openssl",
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-out",
        "server.crt",
        "-extfile",
        "san.ext");
  }

  private static TrustManagerFactory trust(Path caPem) throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    try (InputStream in = Files.newInputStream(caPem)) {
      store.setCertificateEntry(
          "otc-test-ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(store);
    return tmf;
  }

  private static void exec(String... command) throws Exception {
    Process p =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
    }
  }

  private static String run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes());
    p.waitFor(30, TimeUnit.SECONDS);
    return output;
  }

  private static Path onPath(String command) {
    for (String d : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      Path candidate = Path.of(d, command);
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }
}
