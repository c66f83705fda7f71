-- order-timeout schema, version 11: every refund tracked to WeChat's final word.
-- Valid on MySQL 8.0.19+ and MariaDB 10.11+. DATETIME(3) values are UTC, as in V1.
--
-- WeChat Pay answers a refund request with acceptance (PROCESSING), not the result: the result comes as a
-- refund notification (REFUND.SUCCESS, REFUND.ABNORMAL, REFUND.CLOSED) or by querying the refund. One row
-- per refund this system asks for, written before WeChat is called, so a notification always finds it.
-- A retry names the same out_refund_no (the primary key), so WeChat answers it with the refund it has.
CREATE TABLE refunds (
  tenant_id       VARCHAR(32)   NOT NULL,
  -- unique per merchant at WeChat; derived by the refund's purpose (paid-after-close: out_trade_no-pac)
  out_refund_no   VARCHAR(64)   NOT NULL,
  order_id        VARCHAR(32)   NOT NULL,
  -- the trade refunded, as the order's wechat_trades binding names it (mchid NULL as there for old trades)
  mchid           VARCHAR(32)   NULL,
  out_trade_no    VARCHAR(32)   NOT NULL,
  -- PAID_AFTER_CLOSE (the only kind so far)
  purpose         VARCHAR(24)   NOT NULL,
  amount_fen      BIGINT        NOT NULL,
  -- PENDING until WeChat accepted it; PROCESSING; then SUCCESS or CLOSED (final), or ABNORMAL (the payer's
  -- account cannot take the money: an operator applies for the exception refund, after which WeChat goes on)
  status          VARCHAR(16)   NOT NULL DEFAULT 'PENDING',
  refund_id       VARCHAR(64)   NULL,
  -- when this system last sent the request to WeChat: refunds of one order go at least 60 s apart
  requested_at    DATETIME(3)   NULL,
  request_count   INT           NOT NULL DEFAULT 0,
  -- WeChat's success_time, and who told us the last status: NOTIFY, QUERY or CREATE (the create answer)
  success_at      DATETIME(3)   NULL,
  status_source   VARCHAR(8)    NULL,
  user_received_account VARCHAR(64) NULL,
  last_error      VARCHAR(512)  NULL,
  created_at      DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at      DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (tenant_id, out_refund_no),
  -- WeChat keys a refund by (mchid, out_refund_no): one refund, one row, whichever tenant asks
  UNIQUE KEY refunds_refund_no (mchid, out_refund_no),
  -- the one-minute spacing looks up an order's refunds
  KEY refunds_order (tenant_id, order_id, requested_at),
  -- compensation queries refunds WeChat has not settled yet
  KEY refunds_status (status, requested_at, tenant_id, out_refund_no),
  CONSTRAINT refunds_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (tenant_id),
  CONSTRAINT refunds_amount CHECK (amount_fen > 0),
  CONSTRAINT refunds_purpose CHECK (purpose IN ('PAID_AFTER_CLOSE')),
  CONSTRAINT refunds_status_values
    CHECK (status IN ('PENDING', 'PROCESSING', 'SUCCESS', 'CLOSED', 'ABNORMAL')),
  CONSTRAINT refunds_status_source CHECK (status_source IN ('CREATE', 'NOTIFY', 'QUERY'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- paid-after-close refunds asked for before this version: tracked from here on (compensation queries them)
INSERT INTO refunds (tenant_id, out_refund_no, order_id, mchid, out_trade_no, purpose, amount_fen, status,
                     refund_id, requested_at, request_count, created_at)
  SELECT p.tenant_id, p.out_refund_no, p.order_id, w.mchid, w.out_trade_no, 'PAID_AFTER_CLOSE',
         p.amount_fen, p.refund_status, p.refund_id, p.updated_at, p.refund_attempts, p.detected_at
  FROM paid_after_close p
  JOIN wechat_trades w ON w.tenant_id = p.tenant_id AND w.order_id = p.order_id
  WHERE p.refund_status <> 'PENDING';
