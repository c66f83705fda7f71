package io.ordertimeout.domain;

/** One line of an order: how many units of a SKU it reserves. */
public record OrderItem(String skuId, int quantity) {}
