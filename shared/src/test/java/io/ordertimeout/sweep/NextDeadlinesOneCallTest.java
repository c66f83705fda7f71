package io.ordertimeout.sweep;

/** NextDeadlinesTest's cases on a single-node Redis: one call reads every shard. */
class NextDeadlinesOneCallTest extends NextDeadlinesTest {
  @Override
  boolean crossShardCalls() {
    return true;
  }
}
