package io.ordertimeout.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.redis.RedisConnector;
import io.ordertimeout.testing.Await;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * After Redis was unreachable for 10 s, the environment's client is usable again within 2 s of
 * Redis coming back. With Lettuce's default reconnect back-off (doubling up to 30 s) the next
 * attempt after a 10 s outage came ~6 s late, and closes took 10 s to recover (FaultInjectionTest's
 * "Redis unreachable 10 s" row); RedisConnector caps the back-off at 1 s.
 */
@Tag("integration")
class RedisReconnectTest {
  @Test
  void clientIsBackWithinTwoSecondsOfRedisAfterATenSecondOutage() {
    try (OwnRedis redis = OwnRedis.start();
        RedisConnector connector = RedisConnector.connect(redis.uri(), false)) {
      var commands = connector.sync();
      commands.set("otc-reconnect", "before");
      redis.shutdownSaving();
      // the outage itself, not a wait for an outcome: 10 s, as FaultInjectionTest's
      Workers.pause(10_000);
      redis.startAgain();
      long back = System.nanoTime();
      Await.until(
          "the client answers again",
          Duration.ofSeconds(30),
          () -> {
            try {
              return "before".equals(commands.get("otc-reconnect"));
            } catch (RuntimeException stillReconnecting) {
              return false;
            }
          });
      long millis = (System.nanoTime() - back) / 1_000_000;
      assertThat(millis).as("ms from Redis back to the client answering").isLessThan(2_000);
    }
  }
}
