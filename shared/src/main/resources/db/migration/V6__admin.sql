-- order-timeout schema, version 6: the operator's tools (issue 20).
-- Valid on MySQL 8.0.16+ and MariaDB 10.11+. DATETIME(3) values are UTC, as in V1.

-- How a dead letter was resolved, by whom, and where its redrive went. A redrive locks the row,
-- appends the event to the stream and sets these in one transaction, so a second redrive (a retry,
-- another operator) finds it resolved and appends nothing.
ALTER TABLE dead_letters
  ADD COLUMN resolution       VARCHAR(16)   NULL,
  ADD COLUMN resolved_by      VARCHAR(256)  NULL,
  ADD COLUMN redrive_entry_id VARCHAR(40)   NULL;

-- Scheduled jobs an operator paused. In MySQL, not Redis and not an environment variable: a pause
-- must survive a Redis failover or flush (which the design allows to lose data: losing the flag
-- would resume closing in the middle of the incident it was set for) and take effect without a
-- deploy. Each job reads it once per invocation (one primary-key lookup a minute per function).
-- tenant_id '*' is every tenant; a per-tenant row is the same key once tenants pause separately.
CREATE TABLE job_pauses (
  job        VARCHAR(32)   NOT NULL,
  tenant_id  VARCHAR(32)   NOT NULL DEFAULT '*',
  paused_by  VARCHAR(256)  NOT NULL,
  reason     VARCHAR(512)  NOT NULL,
  paused_at  DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (job, tenant_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- What operators did through the admin API: who, to what, why, and the outcome (the audit trail
-- of force-closes, redrives, pauses and compensation runs; the order story shows an order's rows).
CREATE TABLE admin_actions (
  action_id   BIGINT        NOT NULL AUTO_INCREMENT,
  action      VARCHAR(32)   NOT NULL,
  subject     VARCHAR(64)   NOT NULL,
  operator    VARCHAR(256)  NOT NULL,
  reason      VARCHAR(512)  NULL,
  outcome     TEXT          NOT NULL,
  created_at  DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (action_id),
  KEY admin_actions_subject (subject, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
