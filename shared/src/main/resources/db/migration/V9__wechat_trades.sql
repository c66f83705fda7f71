-- order-timeout schema, version 9: each WeChat trade belongs to one (tenant, order).
-- Valid on MySQL 8.0.19+ and MariaDB 10.11+. DATETIME(3) values are UTC, as in V1.
--
-- WeChat Pay keys a trade by (mchid, out_trade_no); order ids are unique per tenant only, and tenants may
-- share a merchant account. A row here is written in the prepay's first transaction, before WeChat is
-- called, and names the trade that order uses: out_trade_no is the order id when no other order of the same
-- merchant holds it, else a digest of (tenant, order id). Every query, close, refund and notification goes
-- through this row, so one tenant's order never acts on another tenant's trade.
CREATE TABLE wechat_trades (
  tenant_id     VARCHAR(32)  NOT NULL,
  order_id      VARCHAR(32)  NOT NULL,
  -- NULL for trades created before this version: their merchant is the tenant's merchant of today, and
  -- they are used only while no other tenant's trade of that merchant has the same out_trade_no
  mchid         VARCHAR(32)  NULL,
  out_trade_no  VARCHAR(32)  NOT NULL,
  created_at    DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (tenant_id, order_id),
  -- one trade, one order (NULL mchids do not collide: the rule for those rows is checked in code)
  UNIQUE KEY wechat_trades_trade (mchid, out_trade_no),
  -- the check for rows without mchid looks up every binding of an out_trade_no
  KEY wechat_trades_out_trade_no (out_trade_no),
  CONSTRAINT wechat_trades_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (tenant_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Orders prepaid before this version used their bare order id as out_trade_no.
INSERT INTO wechat_trades (tenant_id, order_id, mchid, out_trade_no, created_at)
  SELECT tenant_id, order_id, NULL, order_id, COALESCE(prepaid_at, created_at) FROM orders
  WHERE prepaid_at IS NOT NULL OR prepay_id IS NOT NULL;
