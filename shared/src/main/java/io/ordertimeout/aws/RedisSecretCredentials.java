package io.ordertimeout.aws;

import com.fasterxml.jackson.databind.JsonNode;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisCredentialsProvider;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.LongSupplier;
import reactor.core.publisher.Mono;

/**
 * Redis AUTH from a Secrets Manager secret, {@code {"username":"otc-app","password":"..."}} (an
 * ElastiCache RBAC user; no username: the {@code default} user), so the password is in neither the
 * template nor the function's environment.
 *
 * <p>Lettuce asks for the credentials at every connection handshake (the first connect, each
 * reconnect, each cluster node). A handshake more than {@link #REREAD_AFTER_MS} after the last read
 * reads the secret again: a connection refused with WRONGPASS after a rotation reconnects (Lettuce
 * retries every second at most, RedisConnector) and within 5 s authenticates with the new password;
 * no deploy. Connections already open stay authenticated (AUTH is checked once per connection), so
 * an ElastiCache user rotated through its two-password window never drops one. The 5 s floor keeps
 * a reconnect storm, or the handshakes with six cluster nodes at init, to one read: each read is a
 * $0.05-per-10,000 API call and up to 3 s of a cold start.
 */
public final class RedisSecretCredentials implements RedisCredentialsProvider {
  /** A handshake this long after the last read reads the secret again. */
  static final long REREAD_AFTER_MS = 5_000;

  private final String secretId;
  private final Function<String, JsonNode> fresh;
  private final LongSupplier clockMillis;

  /** Guarded by this. */
  private RedisCredentials cached;

  private long readAtMillis;

  /**
   * @param fresh reads the secret from Secrets Manager now ({@link Secrets#freshJson})
   */
  public RedisSecretCredentials(
      String secretId, Function<String, JsonNode> fresh, LongSupplier clockMillis) {
    this.secretId = Objects.requireNonNull(secretId, "secretId");
    this.fresh = Objects.requireNonNull(fresh, "fresh");
    this.clockMillis = Objects.requireNonNull(clockMillis, "clockMillis");
  }

  @Override
  public Mono<RedisCredentials> resolveCredentials() {
    return Mono.fromCallable(this::current);
  }

  /** The credentials for the next handshake: read anew when the last read is 5 s old. */
  public synchronized RedisCredentials current() {
    long now = clockMillis.getAsLong();
    if (cached == null || now - readAtMillis >= REREAD_AFTER_MS) {
      RedisLogin login = RedisLogin.parse(secretId, fresh.apply(secretId));
      cached = RedisCredentials.just(login.username(), login.password());
      readAtMillis = now;
    }
    return cached;
  }

  @Override
  public String toString() {
    return "RedisSecretCredentials[" + secretId + "]";
  }
}
