-- order-timeout schema, version 7: every deadline of an order's life (issue 16).
-- Valid on MySQL 8.0.19+ and MariaDB 10.11+. DATETIME(3) values are UTC, as in V1.
--
-- The order's life after payment: PAID -> SHIPPED -> RECEIVED -> COMPLETED, with AFTER_SALE between
-- RECEIVED and COMPLETED while a request is open. Each transition is a conditional UPDATE on its
-- from-state (lifecycle.Transition); the columns below are what those UPDATEs set and what the timers
-- in Redis are derived from (MySQL is the truth: compensation re-adds a missing timer from them).

ALTER TABLE orders DROP CONSTRAINT orders_status;

ALTER TABLE orders
  ADD COLUMN shipped_at            DATETIME(3)  NULL,
  ADD COLUMN carrier               VARCHAR(32)  NULL,
  ADD COLUMN tracking_no           VARCHAR(64)  NULL,
  -- when a SHIPPED order is confirmed as received for the user (shipped_at + the receipt period,
  -- moved later once by an extension)
  ADD COLUMN receive_due_at        DATETIME(3)  NULL,
  -- set by the one extension a user may ask for: a second one is refused
  ADD COLUMN receipt_extended_at   DATETIME(3)  NULL,
  ADD COLUMN received_at           DATETIME(3)  NULL,
  -- USER (confirmed by the user, through the mall backend) or AUTO (the receipt deadline)
  ADD COLUMN received_by           VARCHAR(8)   NULL,
  -- when a RECEIVED order becomes COMPLETED (received_at + the after-sale window, moved later by the
  -- time every after-sale request stayed open)
  ADD COLUMN complete_due_at       DATETIME(3)  NULL,
  -- set while an after-sale request is open (status AFTER_SALE); the deadline is suspended meanwhile
  ADD COLUMN after_sale_opened_at  DATETIME(3)  NULL,
  ADD COLUMN after_sales           INT          NOT NULL DEFAULT 0,
  ADD COLUMN completed_at          DATETIME(3)  NULL,
  ADD CONSTRAINT orders_status CHECK (
    status IN ('UNPAID', 'PAID', 'SHIPPED', 'RECEIVED', 'AFTER_SALE', 'COMPLETED', 'CLOSED')),
  ADD CONSTRAINT orders_received_by CHECK (received_by IS NULL OR received_by IN ('USER', 'AUTO')),
  -- compensation pages through each deadline's orders by due time, as through UNPAID by expire_at
  ADD KEY orders_status_receive_due (status, receive_due_at, order_id),
  ADD KEY orders_status_complete_due (status, complete_due_at, order_id);

ALTER TABLE coupons DROP CONSTRAINT coupons_status;

ALTER TABLE coupons
  -- NULL: valid without end (coupons issued before this version)
  ADD COLUMN valid_until  DATETIME(3)  NULL,
  ADD COLUMN expired_at   DATETIME(3)  NULL,
  ADD CONSTRAINT coupons_status CHECK (status IN ('AVAILABLE', 'LOCKED', 'USED', 'EXPIRED')),
  ADD KEY coupons_status_valid (status, valid_until, coupon_id);

ALTER TABLE outbox DROP CONSTRAINT outbox_type;

ALTER TABLE outbox
  ADD CONSTRAINT outbox_type CHECK (event_type IN ('created', 'paid', 'closed', 'cancel_requested',
    'shipped', 'receipt_extended', 'received', 'after_sale_opened', 'after_sale_resolved', 'completed'));
