-- order-timeout schema, version 2: payments (issue 3).
-- Valid on MySQL 8.0.16+ and MariaDB 10.11+. DATETIME(3) values are UTC, as in V1.
--
-- orders already carries the prepay state (prepay_id, prepaid_at) and the payment (transaction_id, paid_at).
-- prepaid_at is written BEFORE the WeChat prepay call (conditional on UNPAID and the deadline ahead), so a
-- closer that locks the row either sees the marker and asks WeChat first, or closes the order before the
-- prepay starts and the prepay's conditional UPDATE then refuses it.

-- One WeChat transaction pays one order: a second order claiming the same transaction_id is a bug or an
-- attack, and the key turns it into an error. NULLs (unpaid orders) do not collide on either server.
ALTER TABLE orders ADD UNIQUE KEY orders_transaction_id (transaction_id);

-- A SUCCESS from WeChat for an order that is already CLOSED here (DESIGN.md invariant 6). The order stays
-- CLOSED and its stock is not taken back from whoever holds it now; the money goes back instead. One row per
-- order (a trade is paid at most once), so duplicate notifications and close-path re-queries record it once.
CREATE TABLE paid_after_close (
  order_id         VARCHAR(32)   NOT NULL,
  tenant_id        VARCHAR(32)   NOT NULL,
  transaction_id   VARCHAR(64)   NOT NULL,
  amount_fen       BIGINT        NOT NULL,
  -- NOTIFY (payment notification) or CLOSE (the close path's query)
  detected_by      VARCHAR(16)   NOT NULL,
  detected_at      DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  -- derived from the order id, so every retry of the refund names the same refund at WeChat (idempotent)
  out_refund_no    VARCHAR(64)   NOT NULL,
  -- PENDING until WeChat accepted the refund; then WeChat's PROCESSING / SUCCESS / CLOSED / ABNORMAL
  refund_status    VARCHAR(16)   NOT NULL DEFAULT 'PENDING',
  refund_id        VARCHAR(64)   NULL,
  refund_attempts  INT           NOT NULL DEFAULT 0,
  last_error       VARCHAR(512)  NULL,
  updated_at       DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (order_id),
  UNIQUE KEY paid_after_close_refund_no (out_refund_no),
  -- compensation pages through refunds that are not settled yet
  KEY paid_after_close_status (refund_status, detected_at),
  CONSTRAINT paid_after_close_amount CHECK (amount_fen > 0),
  CONSTRAINT paid_after_close_detected_by CHECK (detected_by IN ('NOTIFY', 'CLOSE')),
  CONSTRAINT paid_after_close_refund_status
    CHECK (refund_status IN ('PENDING', 'PROCESSING', 'SUCCESS', 'CLOSED', 'ABNORMAL'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
