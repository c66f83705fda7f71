package io.ordertimeout.consume;

/** What one consumer run counted, for its ConsumerStats; used by the consumer thread only. */
final class ConsumerCounters {
  long passes;
  long read;
  long claimed;
  long closed;
  long acked;
  long failed;
  long deferred;
  long deadLettered;
  long groupsCreated;
  long errors;

  ConsumerStats stats(String consumer, long startedNanos) {
    return new ConsumerStats(
        consumer,
        passes,
        read,
        claimed,
        closed,
        acked,
        failed,
        deferred,
        deadLettered,
        groupsCreated,
        errors,
        (System.nanoTime() - startedNanos) / 1_000_000);
  }
}
