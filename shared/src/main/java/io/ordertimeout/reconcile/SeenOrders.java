package io.ordertimeout.reconcile;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The tenant's orders the bill had a line for, as 64-bit hashes in a sorted long array: 100,000
 * orders take 800 KB instead of the ~10 MB a set of strings would. Two order ids of one day sharing
 * a hash (odds about 3e-10 at 100,000) would hide one NOT_IN_BILL; nothing is ever applied from it.
 */
final class SeenOrders {
  private long[] hashes = new long[1024];
  private int size;
  private boolean sorted = true;

  void add(String orderId) {
    if (size == hashes.length) {
      hashes = Arrays.copyOf(hashes, size * 2);
    }
    hashes[size++] = hash(orderId);
    sorted = false;
  }

  boolean contains(String orderId) {
    if (!sorted) {
      Arrays.sort(hashes, 0, size);
      sorted = true;
    }
    return Arrays.binarySearch(hashes, 0, size, hash(orderId)) >= 0;
  }

  /** FNV-1a, 64 bits, over the UTF-8 bytes. */
  static long hash(String s) {
    long h = 0xcbf29ce484222325L;
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    return h;
  }
}
