package io.ordertimeout.bench;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.ordertimeout.domain.DeadlineKind;
import io.ordertimeout.domain.TenantIds;
import io.ordertimeout.redis.RedisConnector;
import io.ordertimeout.redis.TimerIndex;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * This system's timer engine without the database: the sharded timer index, timers claimed by the
 * lease-claim script and removed (ZREM) as the sweep does after a successful close. Worker {@code
 * w} of {@code W} claims the shards {@code s} with {@code s % W == w}, as shard leases give each
 * sweeper its own shards.
 *
 * <p>{@code sync}: exactly the production calls, {@link TimerIndex#claimDue} then {@link
 * TimerIndex#remove}, one shard at a time on the shared connection (two round trips per batch).
 * {@code pipelined}: the same script body, but a worker sends the claims of all its shards at once
 * (Lettuce async, one connection), then the ZREMs of everything they returned at once: two round
 * trips per pass instead of two per shard. The sweep could do the same (its pass already claims
 * every held shard before closing). The pipelined engine runs the production script itself, {@code
 * /redis/claimDue-4.lua} from shared's jar, in its one-key form (the payment-timeout key of a
 * shard, one limit): it answers one array per key, so the claims are its first element.
 */
final class LeaseClaimEngine implements TriggerEngine {
  /** The sweep's default claim lease: a claimed timer stays hidden this long. */
  static final long LEASE_MS = 60_000;

  private static final int SHARDS = 16;
  private static final int SEED_CHUNK = 50_000;

  private final String name;
  private final boolean pipelined;
  private final RedisConnector redis;
  private final String prefix;
  private final TimerIndex index;
  private final StatefulRedisConnection<String, String> asyncConnection;
  private final String sha;

  /** The production claim script, which {@link TimerIndex#claimDue} runs too. */
  static final String CLAIM_SCRIPT = "/redis/claimDue-4.lua";

  @SuppressWarnings("unchecked")
  LeaseClaimEngine(String name, String redisUri, String prefix, boolean pipelined) {
    this.name = name;
    this.pipelined = pipelined;
    this.redis = RedisConnector.connect(redisUri, false);
    this.prefix = prefix;
    this.index = new TimerIndex(redis.sync(), prefix, SHARDS);
    if (pipelined) {
      this.asyncConnection =
          (StatefulRedisConnection<String, String>) redis.openDedicated().connection();
      this.sha = asyncConnection.sync().scriptLoad(read(CLAIM_SCRIPT));
    } else {
      this.asyncConnection = null;
      this.sha = null;
    }
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String description() {
    return pipelined
        ? "lease-claim "
            + CLAIM_SCRIPT
            + " (one key per call), 16 shards, each worker pipelining the claims of its"
            + " shards then their ZREMs (Lettuce async, 1 connection), lease "
            + LEASE_MS
            + " ms"
        : "lease-claim TimerIndex.claimDue + TimerIndex.remove as in production, 16 shards, one"
            + " shard per round trip (Lettuce sync, 1 shared connection), lease "
            + LEASE_MS
            + " ms";
  }

  @Override
  public void seed(TriggerPlan plan) {
    Map<String, Long> chunk = new LinkedHashMap<>();
    for (int i = 0; i < plan.timers(); i++) {
      chunk.put(TriggerPlan.id(i), plan.dueAt(i));
      if (chunk.size() == SEED_CHUNK || i == plan.timers() - 1) {
        index.scheduleAll(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, chunk);
        chunk.clear();
      }
    }
  }

  @Override
  public TriggerResult drain(TriggerPlan plan) throws Exception {
    return TriggerDrain.run(
        this,
        plan,
        (w, tally, sink) ->
            pipelined ? passAsync(plan, w, tally, sink) : pass(plan, w, tally, sink));
  }

  private long pass(TriggerPlan plan, int worker, TriggerTally tally, TriggerDrain.Sink sink) {
    long got = 0;
    for (int shard = worker; shard < SHARDS; shard += plan.workers()) {
      long t0 = System.nanoTime();
      List<String> ids =
          index.claimDue(
              TenantIds.DEFAULT, shard, System.currentTimeMillis(), LEASE_MS, plan.batch());
      tally.call(System.nanoTime() - t0);
      if (!ids.isEmpty()) {
        index.remove(TenantIds.DEFAULT, DeadlineKind.PAYMENT_TIMEOUT, ids);
        sink.delivered(tally, ids);
        got += ids.size();
      }
    }
    return got;
  }

  private long passAsync(TriggerPlan plan, int worker, TriggerTally tally, TriggerDrain.Sink sink)
      throws Exception {
    RedisAsyncCommands<String, String> async = asyncConnection.async();
    List<RedisFuture<List<Object>>> claims = new ArrayList<>();
    List<String> keys = new ArrayList<>();
    String now = Long.toString(System.currentTimeMillis());
    String lease = Long.toString(LEASE_MS);
    String limit = Integer.toString(plan.batch());
    long t0 = System.nanoTime();
    for (int shard = worker; shard < SHARDS; shard += plan.workers()) {
      String key = index.timersKey(TenantIds.DEFAULT, shard, DeadlineKind.PAYMENT_TIMEOUT);
      keys.add(key);
      claims.add(async.evalsha(sha, ScriptOutputType.MULTI, new String[] {key}, now, lease, limit));
    }
    List<RedisFuture<Long>> removes = new ArrayList<>();
    List<List<String>> claimed = new ArrayList<>();
    for (int i = 0; i < claims.size(); i++) {
      // claimDue-4 answers one array per key; one key here
      @SuppressWarnings("unchecked")
      List<String> ids = (List<String>) claims.get(i).get(5, TimeUnit.SECONDS).get(0);
      // one pipelined round: each call's latency is the round's time until its reply
      tally.call(System.nanoTime() - t0);
      if (!ids.isEmpty()) {
        removes.add(async.zrem(keys.get(i), ids.toArray(String[]::new)));
        claimed.add(ids);
      }
    }
    long got = 0;
    for (int i = 0; i < removes.size(); i++) {
      removes.get(i).get(5, TimeUnit.SECONDS);
      sink.delivered(tally, claimed.get(i));
      got += claimed.get(i).size();
    }
    return got;
  }

  @Override
  public long keysLeft() {
    return redis.sync().keys(prefix + "*").size();
  }

  @Override
  public void close() {
    if (asyncConnection != null) {
      asyncConnection.close();
    }
    redis.close();
  }

  static String read(String resource) {
    try (InputStream in = LeaseClaimEngine.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("script " + resource + " is not on the classpath");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read script " + resource, e);
    }
  }
}
