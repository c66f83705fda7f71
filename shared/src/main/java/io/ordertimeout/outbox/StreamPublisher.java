package io.ordertimeout.outbox;

import io.ordertimeout.stream.EventStream;
import java.util.List;

/**
 * Appends outbox rows to the Redis stream, in seq order, 500 per script call: a call appends all
 * its entries or throws, so "accepted" is all of them or an exception.
 */
public final class StreamPublisher implements Publisher {
  private final EventStream stream;

  public StreamPublisher(EventStream stream) {
    this.stream = stream;
  }

  @Override
  public Destination destination() {
    return Destination.STREAM;
  }

  @Override
  public List<Long> publish(List<OutboxRow> rows) {
    stream.appendDocuments(rows.stream().map(OutboxRow::document).toList());
    return rows.stream().map(OutboxRow::seq).toList();
  }
}
