package io.ordertimeout.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.ordertimeout.bench.ProcessCpu;
import org.junit.jupiter.api.Test;

class StackCpuTest {

  @Test
  void readsAProcessAndNamesTheTiersItHasNot() {
    StackCpu self = StackCpu.of(ProcessHandle.current().pid());

    assertThat(self.jvmMillis()).isPositive();
    // this JVM has no embedded servers among its children
    assertThat(self.mariaDbMillis()).isEqualTo(-1);
    assertThat(self.redisMillis()).isEqualTo(-1);
    assertThat(StackCpu.of(0)).isEqualTo(StackCpu.UNKNOWN);
  }

  @Test
  void aStepCostsTheDifferencePerOrder() {
    StackCpu used = new StackCpu(1_500, 900, 60).since(new StackCpu(500, 100, 10));

    assertThat(used).isEqualTo(new StackCpu(1_000, 800, 50));
    assertThat(used.perOrder(2_000)).isEqualTo("500 / 400 / 25");
    assertThat(new StackCpu(1_000, -1, 50).since(new StackCpu(0, 0, 0)).perOrder(1_000))
        .isEqualTo("1000 / ? / 50");
    assertThat(used.perOrder(0)).isEqualTo("-");
  }

  @Test
  void knowsTheEmbeddedServersByTheirFileNames() {
    assertThat(ProcessCpu.named("/tmp/otc-embedded/mariadb-11.4.5/bin/mariadbd", "mariadbd"))
        .isTrue();
    assertThat(ProcessCpu.named("/tmp/redis-1/redis-server-6.2.6-v5-linux-amd64", "redis-server"))
        .isTrue();
    assertThat(ProcessCpu.named("/usr/bin/redis-server", "redis-server")).isTrue();
    assertThat(ProcessCpu.named("/usr/bin/redis-cli", "redis-server")).isFalse();
  }
}
