package io.ordertimeout.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * Picks free loopback ports. The port is released before the server binds it, so callers retry on a
 * clash.
 */
final class FreePorts {

  private FreePorts() {}

  static int pick() {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(false);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("could not find a free loopback port", e);
    }
  }
}
