/**
 * MySQL access: the pool, transactions with retries, and the rule every writer follows.
 *
 * <h2>Lock order</h2>
 *
 * <p>Every transaction that writes takes its row locks in this one order, so no two of them can
 * wait for each other in a cycle (InnoDB would kill one as a deadlock, error 1213, and {@link
 * io.ordertimeout.mysql.Tx} would redo it; for the closer that redoes a batch of up to 500 orders):
 *
 * <ol>
 *   <li>{@code orders} rows, by ascending order_id (one {@code SELECT ... ORDER BY order_id FOR
 *       UPDATE} for a batch; a placement's own INSERT);
 *   <li>the rows that belong to those orders alone: {@code order_items}, {@code order_snapshots},
 *       {@code stock_movements}, {@code paid_after_close}, {@code outbox} (each state change's
 *       event, inserted after the order row is locked, which makes seq order commit order per
 *       order);
 *   <li>{@code coupons}, by ascending coupon_id, each by its primary key;
 *   <li>{@code stock}, by ascending sku_id, one UPDATE per SKU, last and right before the commit.
 * </ol>
 *
 * <p>Stock is last because it is the hot row: one SKU on sale is in most orders, and each writer
 * holds its lock from its UPDATE to its commit. Last means that span is one statement and the
 * commit, not the coupon and ledger statements too. Sorting within a table matters as much as the
 * order of tables: two closers' batches over the same SKUs, or a closer and a placement with two
 * SKUs, deadlock as surely when they take the same rows in different orders.
 *
 * <p>The writers: placement ({@code PlaceOrderService}), the paid path including paid-after-close
 * ({@code PaymentService}), prepay ({@code PrepayService}: its own order row only), the close path
 * for timeouts and cancels ({@code OrderCloser}), a cancel request ({@code CancelOrderService}: its
 * order row's cancel_requested_at and its outbox row), and compensation's ledger repair ({@code
 * ReleaseRepair}). {@code LockOrderTest} runs the closer against placements and payments on shared
 * coupons and SKUs and counts deadlocks: zero.
 *
 * <p>Correctness does not rest on this order (conditional UPDATEs and the ledger's UNIQUE key do
 * that); the order only keeps InnoDB from throwing work away.
 */
package io.ordertimeout.mysql;
