package io.ordertimeout.domain;

/**
 * An order a close call moved to CLOSED; lag is closed_at - expire_at by the database clock. A
 * domain type, not part of close's result, so the event stream adapter can publish it without
 * depending on the close use case (that dependency made close and stream a package cycle).
 */
public record ClosedOrder(String orderId, long lagMillis) {}
