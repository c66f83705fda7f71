-- order-timeout schema, version 8: the tenant is part of every identity (issue 18).
-- Valid on MySQL 8.0.19+ and MariaDB 10.11+. DATETIME(3) values are UTC, as in V1.
--
-- Until now orders were keyed by order_id alone and stock by sku_id alone, so two merchants (tenants)
-- could not both have order wx0001 (WeChat's out_trade_no is unique per merchant only) or SKU sku-1.
-- Every key and unique constraint now starts with tenant_id; every statement names the tenant.
-- Existing rows are tenant 'default' (the only tenant before this version). The DEFAULT 'default' the
-- columns had is dropped afterwards: a statement that forgets the tenant now fails (strict mode) instead
-- of writing into the default tenant.

-- The tenants this deployment serves. Onboarding a tenant inserts its row (README, "Onboarding a
-- tenant"); orders, stock and coupons of a tenant without one are refused by the foreign keys below, and
-- the timeout sweep reads this table to know whose timer keys to claim.
CREATE TABLE tenants (
  tenant_id   VARCHAR(32)  NOT NULL,
  created_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (tenant_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

INSERT INTO tenants (tenant_id)
  SELECT 'default' UNION
  SELECT tenant_id FROM orders UNION
  SELECT tenant_id FROM stock UNION
  SELECT tenant_id FROM coupons;

ALTER TABLE stock
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (tenant_id, sku_id),
  ALTER COLUMN tenant_id DROP DEFAULT,
  ADD CONSTRAINT stock_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (tenant_id);

ALTER TABLE coupons
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (tenant_id, coupon_id),
  DROP KEY coupons_locked_by_order,
  ADD KEY coupons_locked_by_order (tenant_id, locked_by_order),
  DROP KEY coupons_status_valid,
  ADD KEY coupons_status_valid (status, valid_until, tenant_id, coupon_id),
  ALTER COLUMN tenant_id DROP DEFAULT,
  ADD CONSTRAINT coupons_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (tenant_id);

-- The keyset indexes compensation pages through end in (tenant_id, order_id): two tenants' orders may
-- share an order id and a deadline, so (deadline, order_id) alone no longer orders them strictly.
ALTER TABLE orders
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (tenant_id, order_id),
  DROP KEY orders_status_expire,
  ADD KEY orders_status_expire (status, expire_at, tenant_id, order_id),
  DROP KEY orders_created_at,
  ADD KEY orders_created_at (created_at, tenant_id, order_id),
  DROP KEY orders_status_receive_due,
  ADD KEY orders_status_receive_due (status, receive_due_at, tenant_id, order_id),
  DROP KEY orders_status_complete_due,
  ADD KEY orders_status_complete_due (status, complete_due_at, tenant_id, order_id),
  ALTER COLUMN tenant_id DROP DEFAULT,
  ADD CONSTRAINT orders_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (tenant_id);

ALTER TABLE order_items
  ADD COLUMN tenant_id VARCHAR(32) NOT NULL DEFAULT 'default' FIRST;
ALTER TABLE order_items
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (tenant_id, order_id, sku_id),
  DROP KEY order_items_sku,
  ADD KEY order_items_sku (tenant_id, sku_id),
  ALTER COLUMN tenant_id DROP DEFAULT;

ALTER TABLE stock_movements
  ADD COLUMN tenant_id VARCHAR(32) NOT NULL DEFAULT 'default' AFTER movement_id;
ALTER TABLE stock_movements
  DROP KEY stock_movements_once,
  ADD UNIQUE KEY stock_movements_once (tenant_id, order_id, sku_id, kind),
  DROP KEY stock_movements_sku,
  ADD KEY stock_movements_sku (tenant_id, sku_id),
  ALTER COLUMN tenant_id DROP DEFAULT;

ALTER TABLE order_snapshots
  ADD COLUMN tenant_id VARCHAR(32) NOT NULL DEFAULT 'default' FIRST;
ALTER TABLE order_snapshots
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (tenant_id, order_id),
  ALTER COLUMN tenant_id DROP DEFAULT;

-- out_refund_no is derived from the order id, and unique per merchant at WeChat: per tenant here.
ALTER TABLE paid_after_close
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (tenant_id, order_id),
  DROP KEY paid_after_close_refund_no,
  ADD UNIQUE KEY paid_after_close_refund_no (tenant_id, out_refund_no);

-- NULL where the entry could not be parsed (as order_id).
ALTER TABLE dead_letters
  ADD COLUMN tenant_id VARCHAR(32) NULL AFTER event_type;
UPDATE dead_letters SET tenant_id = 'default' WHERE order_id IS NOT NULL;
ALTER TABLE dead_letters
  DROP KEY dead_letters_order,
  ADD KEY dead_letters_order (tenant_id, order_id);

-- A flag's subject (an order or SKU id) is a tenant's; deployment-wide flags would use '*'.
ALTER TABLE compensation_flags
  ADD COLUMN tenant_id VARCHAR(32) NOT NULL DEFAULT 'default' AFTER kind;
ALTER TABLE compensation_flags
  DROP KEY compensation_flags_subject,
  ADD UNIQUE KEY compensation_flags_subject (kind, tenant_id, subject),
  ALTER COLUMN tenant_id DROP DEFAULT;

ALTER TABLE outbox
  DROP KEY outbox_order,
  ADD KEY outbox_order (tenant_id, order_id, seq);

ALTER TABLE admin_actions
  ADD COLUMN tenant_id VARCHAR(32) NOT NULL DEFAULT 'default' AFTER action;
ALTER TABLE admin_actions
  DROP KEY admin_actions_subject,
  ADD KEY admin_actions_subject (tenant_id, subject, created_at),
  ALTER COLUMN tenant_id DROP DEFAULT;
