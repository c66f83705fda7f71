package io.ordertimeout.redis;

import io.lettuce.core.RedisCredentialsProvider;
import io.lettuce.core.SslOptions;
import java.util.List;
import java.util.regex.Pattern;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/**
 * How a connection to Redis authenticates and verifies the server.
 *
 * <p><b>Cluster mode over TLS.</b> Lettuce connects to every node at the address the topology
 * (CLUSTER SLOTS / NODES) gives, which is an IP address when the cluster announces IPs; full
 * verification against that IP fails ("No subject alternative names matching IP address ...")
 * because the certificate names the cluster's DNS names (ElastiCache: {@code
 * *.<cluster>.<id>.<region>.cache.amazonaws.com}). So every TLS connection sends the configured
 * host (the configuration endpoint) as its SNI server name, and the JDK's trust manager checks the
 * certificate against the SNI name first: a node at any address must present a certificate, from a
 * trusted CA, for the configured name. That is what verifying the configuration endpoint means; no
 * verification is switched off (the chain is checked as before, and a certificate for another name
 * fails).
 *
 * @param credentials Redis AUTH for every handshake, or null for the URI's own (none, or a local
 *     run's {@code redis://:password@...})
 * @param trust the CAs to trust, or null for the JDK's trust store (ElastiCache's certificates
 *     chain to Amazon's root CAs, which it holds)
 */
public record RedisSecurity(RedisCredentialsProvider credentials, TrustManagerFactory trust) {
  /** The URI's own credentials, the JDK's trust store. */
  public static final RedisSecurity DEFAULT = new RedisSecurity(null, null);

  private static final Pattern IP_LITERAL = Pattern.compile("[0-9.]+|.*:.*");

  /** The TLS options for connections configured with {@code host}; unused by {@code redis://}. */
  SslOptions sslOptions(String host) {
    SslOptions.Builder builder = SslOptions.builder().jdkSslProvider();
    if (trust != null) {
      builder.trustManager(trust);
    }
    if (host != null && !IP_LITERAL.matcher(host).matches()) {
      // a fresh SSLParameters per connection: Lettuce sets the endpoint identification on it
      builder.sslParameters(
          () -> {
            SSLParameters parameters = new SSLParameters();
            parameters.setServerNames(List.of(new SNIHostName(host)));
            return parameters;
          });
    }
    return builder.build();
  }
}
