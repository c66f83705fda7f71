package io.ordertimeout.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A cluster of its own: the failover below replaces one of its masters for good. */
@Tag("integration")
class EmbeddedRedisClusterFailoverTest {
  private static EmbeddedRedisCluster cluster;
  private static RedisClient admin;

  @BeforeAll
  static void start() {
    cluster = EmbeddedRedisCluster.start(3);
    admin = RedisClient.create();
  }

  @AfterAll
  static void stop() {
    admin.shutdown(Duration.ZERO, Duration.ofSeconds(1));
    cluster.close();
  }

  @Test
  void aReplicaPromotedWithTakeoverAfterItsMasterDiedServesTheSlotsWithTheReplicatedData() {
    // Arrange: a key on master 1, written before the replica joins (so the full sync carries it)
    String key = slotKeyOn(1);
    int oldPort = cluster.masterPorts().get(1);
    try (StatefulRedisConnection<String, String> master = admin.connect(uri(oldPort))) {
      master.sync().set(key, "replicated");
    }
    int replicaPort = cluster.addReplica(1);

    // Act: the master crashes, the replica takes over
    cluster.stopMaster(1, false);
    cluster.promoteReplica(1, replicaPort);

    // Assert
    assertThat(cluster.masterPorts())
        .containsExactly(cluster.masterPorts().get(0), replicaPort, cluster.masterPorts().get(2));
    assertThat(cluster.portOfSlot(cluster.keySlot(key))).isEqualTo(replicaPort);
    try (StatefulRedisConnection<String, String> promoted = admin.connect(uri(replicaPort))) {
      assertThat(promoted.sync().get(key)).isEqualTo("replicated");
      assertThat(promoted.sync().info("replication")).contains("role:master");
      assertThat(promoted.sync().clusterInfo()).contains("cluster_state:ok");
    }
  }

  /** A key whose slot master {@code index} serves. */
  private static String slotKeyOn(int index) {
    int port = cluster.masterPorts().get(index);
    for (int i = 0; ; i++) {
      String key = "fo:{" + i + "}";
      if (cluster.portOfSlot(cluster.keySlot(key)) == port) {
        return key;
      }
    }
  }

  private static RedisURI uri(int port) {
    return RedisURI.create("redis://127.0.0.1:" + port);
  }
}
