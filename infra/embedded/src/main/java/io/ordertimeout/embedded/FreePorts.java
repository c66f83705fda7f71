package io.ordertimeout.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** Picks free loopback ports. The port is released before the server binds it, so callers retry on a clash. */
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

  /** True when something accepts TCP connections on 127.0.0.1:port. */
  static boolean listening(int port) {
    try (java.net.Socket socket = new java.net.Socket()) {
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
