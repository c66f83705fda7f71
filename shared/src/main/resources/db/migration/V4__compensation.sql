-- order-timeout schema, version 4: compensation (issue 5).
-- Valid on MySQL 8.0.16+ and MariaDB 10.11+. DATETIME(3) values are UTC, as in V1.

-- The snapshot check pages through recent orders by creation time (keyset on created_at, order_id),
-- so a run reads one index range instead of scanning the table.
ALTER TABLE orders ADD KEY orders_created_at (created_at, order_id);

-- What compensation found but could not repair with certainty, with the evidence. One row per
-- (kind, subject): a divergence seen again on the next run updates its row (last_seen_at,
-- seen_count, evidence) instead of adding one, so a stuck case is one row however long it stays.
-- An operator (or a later run that finds it gone) sets resolved_at; seeing it again reopens it.
CREATE TABLE compensation_flags (
  flag_id       BIGINT        NOT NULL AUTO_INCREMENT,
  -- e.g. LEDGER_MISMATCH, SNAPSHOT_MISMATCH, STOCK_DRIFT, POISON_ORDER, CLOSE_FAILED
  kind          VARCHAR(32)   NOT NULL,
  -- the order id or SKU id the flag is about
  subject       VARCHAR(64)   NOT NULL,
  -- a JSON object: what was expected, what was found
  evidence      TEXT          NOT NULL,
  first_seen_at DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  last_seen_at  DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  seen_count    INT           NOT NULL DEFAULT 1,
  resolved_at   DATETIME(3)   NULL,
  PRIMARY KEY (flag_id),
  UNIQUE KEY compensation_flags_subject (kind, subject),
  KEY compensation_flags_open (resolved_at, last_seen_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
