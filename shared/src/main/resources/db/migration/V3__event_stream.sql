-- order-timeout schema, version 3: the dead letters of the order event stream.
--
-- A stream entry that failed its maximum number of deliveries lands here with its error history,
-- and is then acknowledged. MySQL rather than an SQS queue: it is the store every function already
-- has (no new client, IAM policy or alarm surface), compensation and operators can query it with
-- the orders it names (JOIN on order_id), and resolving a dead letter can be one transaction with
-- the repair it made.

CREATE TABLE dead_letters (
  dead_letter_id  BIGINT        NOT NULL AUTO_INCREMENT,
  -- the stream and entry the event came from; a retried dead-lettering updates its row
  stream_key      VARCHAR(128)  NOT NULL,
  entry_id        VARCHAR(40)   NOT NULL,
  -- NULL when the payload could not be parsed
  event_type      VARCHAR(32)   NULL,
  order_id        VARCHAR(32)   NULL,
  -- the entry's fields as a JSON object, verbatim
  payload         TEXT          NOT NULL,
  deliveries      INT           NOT NULL,
  -- JSON array of error strings, oldest first
  errors          TEXT          NOT NULL,
  created_at      DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  -- set by whoever repaired or discarded it (compensation, an operator)
  resolved_at     DATETIME(3)   NULL,
  PRIMARY KEY (dead_letter_id),
  UNIQUE KEY dead_letters_entry (stream_key, entry_id),
  KEY dead_letters_order (order_id),
  KEY dead_letters_open (resolved_at, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
