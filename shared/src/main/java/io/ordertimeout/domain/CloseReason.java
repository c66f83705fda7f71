package io.ordertimeout.domain;

/**
 * Why an order was closed; TIMEOUT closes re-check {@code expire_at <= NOW(3)} in the closing
 * UPDATE.
 */
public enum CloseReason {
  TIMEOUT,
  USER_CANCEL;

  public boolean requiresDeadline() {
    return this == TIMEOUT;
  }
}
