package io.ordertimeout.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("integration")
class EmbeddedRedisClusterTest {
  private static EmbeddedRedisCluster cluster;
  private static RedisClusterClient client;
  private static StatefulRedisClusterConnection<String, String> connection;

  @BeforeAll
  static void start() {
    cluster = EmbeddedRedisCluster.start(3);
    client = RedisClusterClient.create(cluster.uri());
    connection = client.connect();
  }

  @AfterAll
  static void stop() {
    connection.close();
    client.shutdown();
    cluster.close();
  }

  @Test
  void threeMastersShareTheSlotsAndServeKeysOfEverySlotRange() {
    RedisAdvancedClusterCommands<String, String> redis = connection.sync();
    Set<Integer> ports = new HashSet<>();
    for (int i = 0; i < 30; i++) {
      String key = "k:{" + i + "}";
      redis.set(key, "v" + i);
      ports.add(cluster.portOfSlot(cluster.keySlot(key)));
    }

    assertThat(cluster.masterPorts()).hasSize(3).doesNotHaveDuplicates();
    assertThat(ports).containsExactlyInAnyOrderElementsOf(cluster.masterPorts());
    assertThat(redis.get("k:{7}")).isEqualTo("v7");
    assertThat(redis.clusterInfo()).contains("cluster_state:ok", "cluster_slots_ok:16384");
  }

  @Test
  void aRestartedMasterKeepsItsSlotsAndItsData() {
    RedisAdvancedClusterCommands<String, String> redis = connection.sync();
    String key = "restart:{a}";
    int port = cluster.portOfSlot(cluster.keySlot(key));
    int index = cluster.masterPorts().indexOf(port);
    redis.set(key, "kept");

    cluster.restartMaster(index);

    assertThat(cluster.portOfSlot(cluster.keySlot(key))).isEqualTo(port);
    assertThat(redis.get(key)).isEqualTo("kept");
  }
}
