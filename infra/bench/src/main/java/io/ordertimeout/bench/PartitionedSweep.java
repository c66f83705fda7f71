package io.ordertimeout.bench;

import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.ordertimeout.admin.Pauses;
import io.ordertimeout.lifecycle.DueHandlers;
import io.ordertimeout.redis.ShardLeases;
import io.ordertimeout.sweep.SweepJob;
import io.ordertimeout.sweep.TimeoutSweeper;
import io.ordertimeout.wiring.Components;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

/**
 * The sweep of {@link Components#sweepJob()} for process i of K ({@code share} "i/K"), whose shard
 * leases are limited to the shards {@code s % K == i}: the lease script (EVALSHA/EVAL on a lease
 * key) of any other shard answers 0, "someone else holds it", without reaching Redis. Everything
 * else (claims, closes, timers, the pool) is the production path. See {@link ScaleOutSweeper}.
 */
final class PartitionedSweep {
  private PartitionedSweep() {}

  static SweepJob job(Components app, String share) {
    String[] f = share.split("/");
    int index = Integer.parseInt(f[0]);
    int of = Integer.parseInt(f[1]);
    Set<String> foreign = new HashSet<>();
    for (int shard = 0; shard < app.timers().shards(); shard++) {
      if (shard % of != index) {
        foreign.add(app.timers().leaseKey(shard));
      }
    }
    ShardLeases leases = new ShardLeases(onlyOwnLeases(app.redis().sync(), foreign));
    var config = app.config();
    return new SweepJob(
        () ->
            // Components.newSweeper's arguments, with these leases
            new TimeoutSweeper(
                app.timers(),
                leases,
                app.closer(),
                app.events(),
                app.time(),
                app.metrics(),
                new TimeoutSweeper.Settings(
                    config.sweepBatch(),
                    config.claimLease(),
                    config.sweepPoll(),
                    config.invocationMargin(),
                    config.dbPoolSize(),
                    app.gateway() == null ? Duration.ZERO : config.waits().weChatStep(),
                    config.deadlines().kindBatch(),
                    // the K processes share the shards: none hands over to one started after it
                    config.sweep().runs()),
                app.tenants()::all,
                DueHandlers.of(app.transitions(), app.coupons())),
        app.redis().sync(),
        app.timers(),
        app.tenants()::all,
        app.time(),
        app.metrics(),
        () -> app.pauses().holds(Pauses.SWEEP, app.metrics()));
  }

  @SuppressWarnings("unchecked")
  private static RedisClusterCommands<String, String> onlyOwnLeases(
      RedisClusterCommands<String, String> redis, Set<String> foreign) {
    return (RedisClusterCommands<String, String>)
        Proxy.newProxyInstance(
            PartitionedSweep.class.getClassLoader(),
            new Class<?>[] {RedisClusterCommands.class},
            (proxy, method, args) -> {
              if ((method.getName().equals("evalsha") || method.getName().equals("eval"))
                  && args != null
                  && args.length >= 3
                  && args[2] instanceof String[] keys
                  && keys.length == 1
                  && foreign.contains(keys[0])) {
                return 0L;
              }
              try {
                return method.invoke(redis, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }
}
