package io.ordertimeout.reliability;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy the fault tests control, between the code and Redis or MariaDB: latency on every
 * chunk, connections dropped with a reset, and a black hole (a partition: bytes are held, not lost,
 * and delivered in order when it heals, as TCP retransmission would; new connections are accepted
 * by the kernel but not connected on until then).
 *
 * <p>Written here because no maintained Java library resolved: org.netcrusher:netcrusher-core 0.10
 * did not resolve from Maven Central ({@code ./mvnw dependency:get}, once), Toxiproxy needs its Go
 * server and Testcontainers' module needs Docker, which these tests do not assume. One thread per
 * direction per connection is enough for a pool of 8 connections and a few Redis connections.
 */
final class FaultProxy implements AutoCloseable {
  private final ServerSocket server;
  private volatile int upstreamPort;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private final AtomicLong connections = new AtomicLong();
  private final Object gate = new Object();
  private final PacketRewriter upstreamPackets;
  private volatile long latencyMillis;
  private volatile boolean blackHole;
  private volatile boolean closed;

  /**
   * Rewrites the client's MySQL protocol packets on their way to the server (one packet: a 3-byte
   * little-endian length, a sequence id, the payload); answers the payload to send instead.
   */
  interface PacketRewriter {
    byte[] rewrite(int sequenceId, byte[] payload);
  }

  private FaultProxy(int upstreamPort, PacketRewriter upstreamPackets) throws IOException {
    this.upstreamPort = upstreamPort;
    this.upstreamPackets = upstreamPackets;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::acceptLoop, "fault-proxy-" + upstreamPort);
    acceptor.setDaemon(true);
    acceptor.start();
  }

  static FaultProxy to(int upstreamPort) {
    try {
      return new FaultProxy(upstreamPort, null);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open a proxy to port " + upstreamPort, e);
    }
  }

  /**
   * A proxy in front of MariaDB whose client-to-server bytes go packet by packet through {@code
   * rewriter} (the server-to-client ones pass as they are).
   */
  static FaultProxy toMySql(int upstreamPort, PacketRewriter rewriter) {
    try {
      return new FaultProxy(upstreamPort, rewriter);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open a proxy to port " + upstreamPort, e);
    }
  }

  int port() {
    return server.getLocalPort();
  }

  /** Connections accepted so far (a reconnect after a drop is a new one). */
  long connections() {
    return connections.get();
  }

  /**
   * Sends new connections to {@code port} from now on, as an endpoint's DNS name moving to another
   * node does (ElastiCache's primary endpoint after a failover); open ones stay where they are.
   */
  void repoint(int port) {
    upstreamPort = port;
  }

  /** Delays every chunk in either direction by {@code latency} (zero: none). */
  void latency(Duration latency) {
    latencyMillis = latency.toMillis();
  }

  /** Starts or heals a partition; on heal, held bytes and connections go on in order. */
  void blackHole(boolean on) {
    synchronized (gate) {
      blackHole = on;
      gate.notifyAll();
    }
  }

  /** Resets every open connection (SO_LINGER 0: the peer sees a RST, as a dead middlebox sends). */
  int dropAll() {
    int n = 0;
    for (Socket s : sockets) {
      try {
        s.setSoLinger(true, 0);
        s.close();
        n++;
      } catch (IOException alreadyGone) {
        // closed by its own side meanwhile
      }
      sockets.remove(s);
    }
    return n;
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket client = server.accept();
        connections.incrementAndGet();
        sockets.add(client);
        Thread connect = new Thread(() -> connect(client), "fault-proxy-connect");
        connect.setDaemon(true);
        connect.start();
      } catch (IOException e) {
        if (!closed) {
          // a failed accept of one client; the next accept goes on
          continue;
        }
      }
    }
  }

  private void connect(Socket client) {
    awaitNoBlackHole();
    Socket upstream = new Socket();
    try {
      upstream.connect(
          new InetSocketAddress(InetAddress.getLoopbackAddress(), upstreamPort), 2_000);
      sockets.add(upstream);
      if (upstreamPackets == null) {
        pump(client, upstream, "up");
      } else {
        pumpPackets(client, upstream);
      }
      pump(upstream, client, "down");
    } catch (IOException e) {
      closeQuietly(client);
      closeQuietly(upstream);
    }
  }

  private void pump(Socket from, Socket to, String direction) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[16 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                  awaitNoBlackHole();
                  long delay = latencyMillis;
                  if (delay > 0) {
                    // the injected latency itself, not a wait for an outcome
                    Workers.pause(delay);
                  }
                  out.write(buf, 0, n);
                  out.flush();
                }
              } catch (IOException closedOrReset) {
                // one side closed or was reset: close the other as a real hop would
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "fault-proxy-" + direction);
    t.setDaemon(true);
    t.start();
  }

  /** The MySQL packet size limit: a payload this long continues in the next packet. */
  private static final int MAX_PACKET = 0xFFFFFF;

  private void pumpPackets(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              try (DataInputStream in =
                      new DataInputStream(new BufferedInputStream(from.getInputStream()));
                  OutputStream out = to.getOutputStream()) {
                byte[] header = new byte[4];
                boolean continuation = false;
                while (true) {
                  in.readFully(header);
                  int length =
                      (header[0] & 0xFF) | (header[1] & 0xFF) << 8 | (header[2] & 0xFF) << 16;
                  byte[] payload = new byte[length];
                  in.readFully(payload);
                  if (!continuation && length < MAX_PACKET) {
                    payload = upstreamPackets.rewrite(header[3] & 0xFF, payload);
                  }
                  continuation = length == MAX_PACKET;
                  awaitNoBlackHole();
                  // header and payload in one write: two small writes would meet Nagle's
                  // algorithm and the server's delayed ACK, ~40 ms per statement
                  byte[] packet = new byte[4 + payload.length];
                  packet[0] = (byte) payload.length;
                  packet[1] = (byte) (payload.length >>> 8);
                  packet[2] = (byte) (payload.length >>> 16);
                  packet[3] = header[3];
                  System.arraycopy(payload, 0, packet, 4, payload.length);
                  out.write(packet);
                  out.flush();
                }
              } catch (IOException closedOrReset) {
                // one side closed or was reset (EOFException included): close the other
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "fault-proxy-up-packets");
    t.setDaemon(true);
    t.start();
  }

  private void awaitNoBlackHole() {
    synchronized (gate) {
      while (blackHole && !closed) {
        try {
          gate.wait(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  private void closeQuietly(Socket s) {
    sockets.remove(s);
    try {
      s.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  @Override
  public void close() {
    closed = true;
    blackHole(false);
    try {
      server.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    dropAll();
  }
}
