package io.ordertimeout.outbox;

/** Where the relay delivers outbox rows; each has its own progress column and lease. */
public enum Destination {
  /** The Redis stream the closers group reads. */
  STREAM("stream", "streamed_at"),
  /** The EventBridge bus downstream systems subscribe to. */
  EVENTBRIDGE("eventbridge", "bridged_at");

  private final String leaseName;
  private final String column;

  Destination(String leaseName, String column) {
    this.leaseName = leaseName;
    this.column = column;
  }

  /** The row of outbox_leases. */
  public String leaseName() {
    return leaseName;
  }

  /** The outbox column that marks a row delivered here (a constant: safe to put in SQL). */
  public String column() {
    return column;
  }
}
