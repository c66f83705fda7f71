package io.ordertimeout.embedded;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslVerifyMode;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.embedded.RedisServer;
import redis.embedded.core.ExecutableProvider;

/**
 * A Redis Cluster of {@code n} masters on loopback, built from the redis-server 6.2 binary inside
 * embedded-redis: each node a process with {@code cluster-enabled yes}, the 16384 slots split
 * evenly, joined with CLUSTER MEET, ready once every node reports {@code cluster_state:ok}. A test
 * may add a replica to a master ({@link #addReplica}) and promote it ({@link #promoteReplica}).
 *
 * <p>Each node owns a directory under one temp dir (deleted on {@link #close()}) holding its
 * nodes.conf, so a restarted master comes back with its node id, epoch and slots; nothing else is
 * written there except the RDB file of a data-keeping {@link #restartMaster} (see there).
 *
 * <p>{@code cluster-require-full-coverage no}: while one master is down the others keep serving
 * their slots, as an ElastiCache shard outage looks to clients; only the down master's slots fail.
 */
public final class EmbeddedRedisCluster implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedRedisCluster.class);

  static final int SLOTS = 16_384;

  /**
   * 2 s: a master turns its state ok only a node timeout after it last saw itself in a minority
   * (Redis clamps that rejoin delay to 0.5-5 s), so this timeout is what a start or restart waits;
   * the default 15 s would make every test class wait 15 s, while 2 s still rides out GC pauses.
   */
  private static final int NODE_TIMEOUT_MILLIS = 2_000;

  /** Slots per CLUSTER ADDSLOTS call: 16384/3 slots in one call is fine, chunks keep args small. */
  private static final int ADDSLOTS_CHUNK = 1_000;

  private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

  private final Path root;
  private final String executable;

  /** The nodes' TLS files, or null: plain TCP. */
  private final Tls tls;

  private final List<Node> masters = new ArrayList<>();

  /**
   * Replicas started by {@link #addReplica}, and masters a failover replaced (dead, kept to close).
   */
  private final List<Node> others = new ArrayList<>();

  /** One client (one set of Netty threads) for every admin connection to every node. */
  private final RedisClient admin = RedisClient.create();

  private EmbeddedRedisCluster(Path root, String executable, Tls tls) {
    this.root = root;
    this.executable = executable;
    this.tls = tls;
  }

  /**
   * TLS for every node's client port and the cluster bus ({@code tls-cluster yes}, so the topology
   * announces the TLS ports), with a certificate and key in PEM files. Clients are not asked for a
   * certificate, as ElastiCache does not.
   *
   * @param executable a redis-server built with TLS (Debian's is; embedded-redis's 6.2 is not)
   */
  public record Tls(Path executable, Path certificate, Path key, Path caCertificate) {}

  /** Starts {@code masters} (at least 3, Redis Cluster's minimum for failure detection) nodes. */
  public static EmbeddedRedisCluster start(int masters) {
    return start(masters, null);
  }

  /** As {@link #start(int)}, every node speaking TLS only ({@code tls} null: plain TCP). */
  public static EmbeddedRedisCluster start(int masters, Tls tls) {
    if (masters < 3) {
      throw new IllegalArgumentException(
          "a Redis Cluster needs at least 3 masters, not " + masters);
    }
    long started = System.nanoTime();
    EmbeddedRedisCluster cluster = create(tls);
    try {
      for (int i = 0; i < masters; i++) {
        cluster.masters.add(cluster.startNode());
      }
      cluster.assignSlots();
      cluster.meet();
      cluster.awaitOk();
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
    log.info(
        "embedded Redis Cluster of {} masters on ports {} ready in {} ms",
        masters,
        cluster.masterPorts(),
        (System.nanoTime() - started) / 1_000_000);
    return cluster;
  }

  /** A seed for Lettuce's RedisClusterClient: the first master; the client discovers the rest. */
  public String uri() {
    return (tls == null ? "redis://" : "rediss://") + "127.0.0.1:" + masters.get(0).port;
  }

  public List<Integer> masterPorts() {
    return masters.stream().map(n -> n.port).toList();
  }

  /**
   * Restarts master {@code index} on the same port with its nodes.conf <b>and its data</b>: the
   * node is stopped with SHUTDOWN SAVE (an RDB file in its temp dir, loaded on start), so no
   * acknowledged write is lost. Its slots refuse commands until it is back.
   */
  public void restartMaster(int index) {
    stopMaster(index, true);
    startMaster(index);
  }

  /**
   * Stops master {@code index}. {@code keepData}: SHUTDOWN SAVE, the next start reloads the data;
   * otherwise the process is killed (SIGKILL, a crash) and the next start is empty, with the same
   * node id and slots.
   */
  public synchronized void stopMaster(int index, boolean keepData) {
    Node node = masters.get(index);
    if (keepData) {
      node.shutdownSaving();
    } else {
      node.deleteDump();
    }
    node.kill();
    log.info(
        "embedded cluster master {} on port {} stopped (data kept: {})",
        index,
        node.port,
        keepData);
  }

  /** Starts a stopped master again and waits until every node reports cluster_state:ok. */
  public synchronized void startMaster(int index) {
    masters.get(index).start();
    awaitOk();
  }

  /** Runs {@code CLUSTER KEYSLOT key}. */
  public long keySlot(String key) {
    return masters.get(0).call(c -> c.clusterKeyslot(key));
  }

  /** The port of the master serving {@code slot}, read from CLUSTER NODES. */
  public int portOfSlot(long slot) {
    for (Node node : masters) {
      String id = node.call(RedisCommands::clusterMyId);
      for (String line : masters.get(0).call(RedisCommands::clusterNodes).split("\n")) {
        if (line.startsWith(id) && servesSlot(line, slot)) {
          return node.port;
        }
      }
    }
    throw new IllegalStateException("no master of " + masterPorts() + " serves slot " + slot);
  }

  /** KEYS {@code pattern} on every master, merged: a test's view of what it left behind. */
  public List<String> keys(String pattern) {
    List<String> keys = new ArrayList<>();
    for (Node node : masters) {
      keys.addAll(node.call(c -> c.keys(pattern)));
    }
    return keys;
  }

  /**
   * Starts a replica of master {@code index} (for a failover): a new node joins with CLUSTER MEET
   * and follows the master with CLUSTER REPLICATE; returns its port once its replication link is up
   * and every node knows it.
   */
  public synchronized int addReplica(int index) {
    Node master = masters.get(index);
    String masterId = master.call(RedisCommands::clusterMyId);
    Node replica = startNode();
    others.add(replica);
    replica.call(c -> c.clusterMeet("127.0.0.1", master.port));
    // CLUSTER REPLICATE needs the master in the new node's table: gossip brings it in ~100 ms
    awaitTrue(
        "node " + replica.port + " knows master " + master.port,
        () -> replica.call(RedisCommands::clusterNodes).contains(masterId));
    replica.call(c -> c.clusterReplicate(masterId));
    awaitTrue(
        "replica " + replica.port + " of master " + master.port + " in sync",
        () -> replica.call(c -> c.info("replication")).contains("master_link_status:up"));
    awaitOk();
    log.info("embedded cluster replica on port {} follows master {}", replica.port, master.port);
    return replica.port;
  }

  /**
   * Promotes the replica on {@code replicaPort} in place of master {@code index} with CLUSTER
   * FAILOVER TAKEOVER (no vote of the other masters, no handshake with the old master: what a
   * failover of a dead primary does) and waits until every live node sees it serving the old
   * master's slots. If the cluster's own failover (a node timeout after the master died) promoted
   * it first, only the wait remains. The old master stays known (as failed) until {@link #close()}.
   */
  public synchronized void promoteReplica(int index, int replicaPort) {
    Node replica =
        others.stream()
            .filter(n -> n.port == replicaPort)
            .findFirst()
            .orElseThrow(() -> new IllegalArgumentException("no replica on port " + replicaPort));
    String id = replica.call(RedisCommands::clusterMyId);
    if (replica.call(c -> c.info("replication")).contains("role:slave")) {
      replica.call(c -> c.clusterFailover(false, true));
    }
    Node old = masters.set(index, replica);
    others.remove(replica);
    others.add(old);
    awaitTrue(
        "every live master sees " + replicaPort + " as the master of " + old.port + "'s slots",
        () -> {
          for (Node node : masters) {
            if (!promoted(node.call(RedisCommands::clusterNodes), id)
                || !node.call(RedisCommands::clusterInfo).contains("cluster_state:ok")) {
              return false;
            }
          }
          return true;
        });
    log.info("embedded cluster replica {} promoted in place of master {}", replicaPort, old.port);
  }

  /** The line of node {@code id} in CLUSTER NODES says master and lists slots. */
  private static boolean promoted(String nodes, String id) {
    for (String line : nodes.split("\n")) {
      String[] fields = line.split(" ");
      if (fields[0].equals(id)) {
        return fields[2].contains("master") && fields.length > 8;
      }
    }
    return false;
  }

  private void awaitTrue(String what, java.util.function.BooleanSupplier condition) {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      try {
        if (condition.getAsBoolean()) {
          return;
        }
      } catch (RuntimeException e) {
        // a node not answering yet: poll again
      }
      sleep(50);
    }
    throw new IllegalStateException("Redis Cluster on " + masterPorts() + ": not " + what);
  }

  @Override
  public synchronized void close() {
    List<Node> all = new ArrayList<>(masters);
    all.addAll(others);
    for (Node node : all) {
      try {
        node.kill();
      } catch (RuntimeException e) {
        log.warn("could not stop cluster node on port {}", node.port, e);
      }
    }
    admin.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    try {
      MariaDbBinaries.deleteTree(root);
    } catch (IOException e) {
      log.warn("could not delete the cluster's temp dir {}", root, e);
    }
  }

  // ---- setup ----

  private static EmbeddedRedisCluster create(Tls tls) {
    try {
      Path root = Files.createTempDirectory("otc-redis-cluster-");
      String binary =
          tls != null
              ? tls.executable().toAbsolutePath().toString()
              : ExecutableProvider.newJarResourceProvider().get().getAbsolutePath();
      return new EmbeddedRedisCluster(root, binary, tls);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot prepare an embedded Redis Cluster", e);
    }
  }

  private Node startNode() {
    IllegalStateException failure = null;
    for (int attempt = 1; attempt <= 3; attempt++) {
      int port = pickClusterPort();
      Node node = new Node(port, root.resolve("node-" + port), executable, tls, admin);
      try {
        node.start();
        return node;
      } catch (IllegalStateException e) {
        failure = failure == null ? e : failure;
        log.warn("cluster node failed to start on port {} (attempt {}/3)", port, attempt, e);
      }
    }
    throw failure;
  }

  /** Master i of n serves slots [i*16384/n, (i+1)*16384/n). */
  private void assignSlots() {
    int n = masters.size();
    for (int i = 0; i < n; i++) {
      int from = i * SLOTS / n;
      int to = (i + 1) * SLOTS / n;
      for (int chunk = from; chunk < to; chunk += ADDSLOTS_CHUNK) {
        int[] slots = IntStream.range(chunk, Math.min(to, chunk + ADDSLOTS_CHUNK)).toArray();
        masters.get(i).call(c -> c.clusterAddSlots(slots));
      }
    }
  }

  private void meet() {
    Node first = masters.get(0);
    for (Node other : masters.subList(1, masters.size())) {
      first.call(c -> c.clusterMeet("127.0.0.1", other.port));
    }
  }

  /** Gossip takes a few hundred ms to spread slots and epochs; poll every node's CLUSTER INFO. */
  private void awaitOk() {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    String last = "";
    while (System.nanoTime() < deadline) {
      last = notReady();
      if (last.isEmpty()) {
        return;
      }
      sleep(50);
    }
    throw new IllegalStateException(
        "Redis Cluster on " + masterPorts() + " not ok after " + READY_TIMEOUT + ": " + last);
  }

  /** Empty when every node sees state ok, all slots and all nodes; else the first complaint. */
  private String notReady() {
    for (Node node : masters) {
      String info;
      try {
        info = node.call(RedisCommands::clusterInfo);
      } catch (RuntimeException e) {
        return "port " + node.port + ": " + e.getMessage();
      }
      if (!info.contains("cluster_state:ok")
          || !info.contains("cluster_slots_ok:" + SLOTS)
          || !info.contains("cluster_known_nodes:" + (masters.size() + others.size()))) {
        return "port " + node.port + ": " + info.replace("\r\n", " ");
      }
    }
    return "";
  }

  private static boolean servesSlot(String nodesLine, long slot) {
    String[] fields = nodesLine.split(" ");
    for (int f = 8; f < fields.length; f++) {
      String range = fields[f];
      if (range.startsWith("[")) {
        continue; // a slot in migration
      }
      int dash = range.indexOf('-');
      long lo = Long.parseLong(dash < 0 ? range : range.substring(0, dash));
      long hi = dash < 0 ? lo : Long.parseLong(range.substring(dash + 1));
      if (slot >= lo && slot <= hi) {
        return true;
      }
    }
    return false;
  }

  /**
   * A free loopback port whose cluster bus port (port + 10000) is free too; ephemeral ports above
   * 55535 would put the bus port past 65535, so this picks from 20000-45535 instead.
   */
  private static int pickClusterPort() {
    for (int attempt = 0; attempt < 100; attempt++) {
      int port = 20_000 + ThreadLocalRandom.current().nextInt(25_536);
      if (free(port) && free(port + 10_000)) {
        return port;
      }
    }
    throw new IllegalStateException("no free loopback port pair (p, p+10000) in 100 tries");
  }

  private static boolean free(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(false);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting on the Redis Cluster", e);
    }
  }

  /** One redis-server process, started from the command line (no config file). */
  private static final class Node {
    private final int port;
    private final Path dir;
    private final String executable;
    private final Tls tls;
    private final RedisClient admin;
    private RedisServer server;
    private StatefulRedisConnection<String, String> connection;

    Node(int port, Path dir, String executable, Tls tls, RedisClient admin) {
      this.port = port;
      this.dir = dir;
      this.executable = executable;
      this.tls = tls;
      this.admin = admin;
    }

    void start() {
      try {
        Files.createDirectories(dir);
        server = new RedisServer(port, commandLine(), true);
        server.start();
      } catch (IOException | RuntimeException e) {
        throw new IllegalStateException("cluster node did not start on 127.0.0.1:" + port, e);
      }
    }

    /**
     * {@code save ""}: no periodic snapshots, so only an explicit SHUTDOWN SAVE writes an RDB file;
     * {@code appendonly no}: no AOF, tests never wait on fsync.
     */
    private List<String> commandLine() {
      List<String> line = new ArrayList<>(List.of(executable));
      if (tls == null) {
        line.addAll(List.of("--port", Integer.toString(port)));
      } else {
        line.addAll(
            List.of(
                "--port",
                "0",
                "--tls-port",
                Integer.toString(port),
                "--tls-cert-file",
                tls.certificate().toAbsolutePath().toString(),
                "--tls-key-file",
                tls.key().toAbsolutePath().toString(),
                "--tls-ca-cert-file",
                tls.caCertificate().toAbsolutePath().toString(),
                "--tls-cluster",
                "yes",
                "--tls-replication",
                "yes",
                "--tls-auth-clients",
                "no"));
      }
      line.addAll(settings());
      return line;
    }

    private List<String> settings() {
      return List.of(
          "--bind",
          "127.0.0.1",
          "--dir",
          dir.toAbsolutePath().toString(),
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          "nodes.conf",
          "--cluster-node-timeout",
          Integer.toString(NODE_TIMEOUT_MILLIS),
          "--cluster-require-full-coverage",
          "no",
          "--save",
          "",
          "--appendonly",
          "no",
          "--dbfilename",
          "dump.rdb",
          "--daemonize",
          "no");
    }

    /** SHUTDOWN SAVE writes the RDB and exits; waits until the port stops answering. */
    void shutdownSaving() {
      try {
        call(
            c -> {
              c.shutdown(true);
              return null;
            });
      } catch (RuntimeException e) {
        // The connection drops as the server exits: that is the expected answer to SHUTDOWN.
      }
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (answers() && System.nanoTime() < deadline) {
        sleep(20);
      }
    }

    void deleteDump() {
      try {
        Files.deleteIfExists(dir.resolve("dump.rdb"));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot delete the RDB file of node " + port, e);
      }
    }

    void kill() {
      disconnect();
      if (server == null) {
        return;
      }
      try {
        server.stop();
      } catch (IOException e) {
        throw new UncheckedIOException("cluster node on port " + port + " did not stop", e);
      }
    }

    private boolean answers() {
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
        return true;
      } catch (IOException e) {
        return false;
      }
    }

    /**
     * Admin calls share one standalone connection per node, reopened after a failure or restart:
     * opening one per call cost ~0.5 s each on a loaded 2-core machine.
     */
    synchronized <T> T call(Function<RedisCommands<String, String>, T> work) {
      if (connection == null || !connection.isOpen()) {
        RedisURI uri = RedisURI.create("127.0.0.1", port);
        uri.setTimeout(Duration.ofSeconds(5));
        if (tls != null) {
          // the admin side of the test harness: encrypted as the nodes demand, not verified
          uri.setSsl(true);
          uri.setVerifyPeer(SslVerifyMode.NONE);
        }
        connection = admin.connect(uri);
      }
      try {
        return work.apply(connection.sync());
      } catch (RuntimeException e) {
        disconnect();
        throw e;
      }
    }

    synchronized void disconnect() {
      if (connection != null) {
        connection.close();
        connection = null;
      }
    }
  }
}
