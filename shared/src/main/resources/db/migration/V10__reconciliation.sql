-- order-timeout schema, version 10: daily reconciliation against WeChat Pay's trade bill.
-- Valid on MySQL 8.0.16+ and MariaDB 10.11+. DATETIME(3) values are UTC, as in V1. bill_date is the
-- bill's day in Asia/Shanghai (WeChat's business day), not a UTC date.

-- One report per tenant and bill day; a re-run of the day replaces the counts (which a re-run leaves
-- the same: a line's category is sticky once recorded in reconciliation_lines) and counts the runs.
CREATE TABLE reconciliation_reports (
  tenant_id     VARCHAR(32)  NOT NULL,
  bill_date     DATE         NOT NULL,
  mchid         VARCHAR(32)  NOT NULL,
  -- detail lines of the merchant's bill (every tenant of a shared merchant reads the same bill)
  bill_lines    INT          NOT NULL,
  -- a JSON object: category -> lines (reconcile.LineCategory)
  counts        TEXT         NOT NULL,
  -- lines of this tenant's run that need an operator (flagged categories)
  flags         INT          NOT NULL,
  runs          INT          NOT NULL DEFAULT 1,
  first_run_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  last_run_at   DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (tenant_id, bill_date),
  CONSTRAINT reconciliation_reports_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (tenant_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Every bill line (or paid order) that was not simply fine: what was done (APPLIED, PAID_AFTER_CLOSE)
-- or what an operator must look at (flagged). One row per merchant, day and reference, whoever ran
-- first: a line of a merchant two tenants share that belongs to neither is recorded by the first
-- tenant's run, and the second finds it recorded instead of flagging it again.
CREATE TABLE reconciliation_lines (
  line_id      BIGINT       NOT NULL AUTO_INCREMENT,
  mchid        VARCHAR(32)  NOT NULL,
  bill_date    DATE         NOT NULL,
  -- T:<out_trade_no> (a payment line), R:<out_refund_no> (a refund line), O:<order_id> (a paid order
  -- of tenant_id with no line)
  ref          VARCHAR(80)  NOT NULL,
  -- the tenant whose run recorded the row: the line's owner, or the first run of the merchant's day
  tenant_id    VARCHAR(32)  NOT NULL,
  order_id     VARCHAR(32)  NULL,
  category     VARCHAR(32)  NOT NULL,
  flagged      BOOLEAN      NOT NULL,
  -- a JSON object: what the bill says, what was found here
  detail       TEXT         NOT NULL,
  recorded_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  resolved_at  DATETIME(3)  NULL,
  PRIMARY KEY (line_id),
  UNIQUE KEY reconciliation_lines_ref (mchid, bill_date, ref),
  KEY reconciliation_lines_tenant (tenant_id, bill_date, flagged)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The orders paid on a bill day, for the "paid here, no line in the bill" check.
ALTER TABLE orders ADD KEY orders_paid_at (tenant_id, paid_at);

-- A paid-after-close case the bill found (its notification lost, compensation not there yet).
ALTER TABLE paid_after_close DROP CONSTRAINT paid_after_close_detected_by;
ALTER TABLE paid_after_close
  ADD CONSTRAINT paid_after_close_detected_by CHECK (detected_by IN ('NOTIFY', 'CLOSE', 'BILL'));
