package io.ordertimeout.domain;

/**
 * Why an order was closed; TIMEOUT closes re-check {@code expire_at <= NOW(3)} in the closing
 * UPDATE.
 */
public enum CloseReason {
  TIMEOUT,
  USER_CANCEL,
  /** An operator's force-close (admin API): before the deadline, the reason in admin_actions. */
  OPERATOR;

  public boolean requiresDeadline() {
    return this == TIMEOUT;
  }
}
