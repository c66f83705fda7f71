-- order-timeout schema, version 5: the transactional outbox (issue 17).
-- Valid on MySQL 8.0.16+ and MariaDB 10.11+. DATETIME(3) values are UTC, as in V1.
--
-- Every state change inserts its event here in its own transaction (placement, payment, close, cancel
-- request), so an event exists iff its change committed. The relay (outbox.OutboxRelay) is the only
-- writer of these events to the Redis stream and to EventBridge.

CREATE TABLE outbox (
  -- the relay order. Two events of one order are written by transactions that both lock the order's
  -- row first (the placement's INSERT, or FOR UPDATE / a conditional UPDATE on it), so the later one
  -- takes its seq after the earlier one committed: per order, seq order is commit order. Across orders
  -- a lower seq may commit later, which is why progress is a mark per row, never a "last seq" cursor
  -- (a cursor would skip that row for ever).
  seq             BIGINT        NOT NULL AUTO_INCREMENT,
  -- what subscribers deduplicate by (the Redis entry's "id", the EventBridge detail's "id")
  event_id        CHAR(36)      NOT NULL,
  order_id        VARCHAR(32)   NOT NULL,
  tenant_id       VARCHAR(32)   NOT NULL,
  -- created | paid | closed | cancel_requested (stream.EventType wire names)
  event_type      VARCHAR(32)   NOT NULL,
  schema_version  SMALLINT      NOT NULL,
  -- the type's own fields as a JSON object (reason, lagMs, transactionId, ...)
  payload         TEXT          NOT NULL,
  -- the Lambda request id (or API request id) of the change, to join events with logs
  trace_id        VARCHAR(64)   NULL,
  committed_at    DATETIME(3)   NOT NULL,
  -- set by the relay once the destination accepted the event; NULL = still to deliver
  streamed_at     DATETIME(3)   NULL,
  bridged_at      DATETIME(3)   NULL,
  PRIMARY KEY (seq),
  UNIQUE KEY outbox_event_id (event_id),
  -- the order's timeline (GET /orders/{id}/events) and the cancel re-delivery's lookup
  KEY outbox_order (order_id, seq),
  -- each destination's relay pass reads "IS NULL ORDER BY seq LIMIT n" off its own index
  KEY outbox_unstreamed (streamed_at, seq),
  KEY outbox_unbridged (bridged_at, seq),
  -- retention deletes by age in bounded batches
  KEY outbox_committed (committed_at),
  CONSTRAINT outbox_type CHECK (event_type IN ('created', 'paid', 'closed', 'cancel_requested'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One relay per destination at a time: the holder renews its lease with a conditional UPDATE on the
-- database clock. The lease saves duplicate work only; per-order order holds without it (see
-- OutboxRelay), so a relay that pauses past its lease costs duplicates, never a reordering or a loss.
CREATE TABLE outbox_leases (
  destination  VARCHAR(16)   NOT NULL,
  holder       VARCHAR(64)   NULL,
  expires_at   DATETIME(3)   NOT NULL,
  PRIMARY KEY (destination)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

INSERT INTO outbox_leases (destination, holder, expires_at) VALUES
  ('stream', NULL, '1970-01-01 00:00:00.000'),
  ('eventbridge', NULL, '1970-01-01 00:00:00.000');

-- A cancel request is a row in MySQL before it is an event: set once (UNPAID orders only) in the same
-- transaction as its outbox row. While the order stays UNPAID with this set, the relay re-delivers the
-- cancel to the stream (Redis lost the entry, or a consumer never got to it); the key keeps that lookup
-- to the few UNPAID orders with a pending cancel.
ALTER TABLE orders ADD COLUMN cancel_requested_at DATETIME(3) NULL,
  ADD KEY orders_cancel_pending (status, cancel_requested_at);
