package io.ordertimeout.domain;

/**
 * The only transitions are UNPAID -> PAID and UNPAID -> CLOSED; both are conditional UPDATEs in
 * MySQL.
 */
public enum OrderStatus {
  UNPAID,
  PAID,
  CLOSED
}
