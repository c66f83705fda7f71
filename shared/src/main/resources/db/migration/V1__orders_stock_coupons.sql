-- order-timeout schema, version 1.
-- Valid on MySQL 8.0.16+ and MariaDB 10.11+ (CHECK constraints are enforced on both).
-- All DATETIME(3) values are UTC: connections set their session time zone to UTC, so NOW(3) is UTC too.

CREATE TABLE stock (
  sku_id      VARCHAR(64)  NOT NULL,
  tenant_id   VARCHAR(32)  NOT NULL DEFAULT 'default',
  available   BIGINT       NOT NULL,
  reserved    BIGINT       NOT NULL DEFAULT 0,
  sold        BIGINT       NOT NULL DEFAULT 0,
  -- initial stock plus every restock: invariant 1 says available + reserved + sold == total.
  total       BIGINT       NOT NULL,
  updated_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (sku_id),
  CONSTRAINT stock_non_negative CHECK (available >= 0 AND reserved >= 0 AND sold >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE coupons (
  coupon_id        VARCHAR(64)  NOT NULL,
  tenant_id        VARCHAR(32)  NOT NULL DEFAULT 'default',
  owner_user_id    VARCHAR(64)  NOT NULL,
  status           VARCHAR(16)  NOT NULL DEFAULT 'AVAILABLE',
  locked_by_order  VARCHAR(32)  NULL,
  updated_at       DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (coupon_id),
  KEY coupons_locked_by_order (locked_by_order),
  CONSTRAINT coupons_status CHECK (status IN ('AVAILABLE', 'LOCKED', 'USED'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE orders (
  -- the merchant's out_trade_no at WeChat Pay: 6 to 32 characters of [0-9A-Za-z_-|*]
  order_id           VARCHAR(32)  NOT NULL,
  tenant_id          VARCHAR(32)  NOT NULL DEFAULT 'default',
  user_id            VARCHAR(64)  NOT NULL,
  status             VARCHAR(16)  NOT NULL,
  amount_fen         BIGINT       NOT NULL,
  coupon_id          VARCHAR(64)  NULL,
  -- SHA-256 of the canonical placing request: an identical retry is answered with the existing order
  request_hash       CHAR(64)     NOT NULL,
  prepay_id          VARCHAR(64)  NULL,
  prepaid_at         DATETIME(3)  NULL,
  transaction_id     VARCHAR(64)  NULL,
  created_at         DATETIME(3)  NOT NULL,
  expire_at          DATETIME(3)  NOT NULL,
  paid_at            DATETIME(3)  NULL,
  closed_at          DATETIME(3)  NULL,
  close_reason       VARCHAR(16)  NULL,
  version            INT          NOT NULL DEFAULT 0,
  PRIMARY KEY (order_id),
  -- compensation pages through UNPAID orders by deadline (keyset on expire_at, order_id)
  KEY orders_status_expire (status, expire_at, order_id),
  KEY orders_closed_at (closed_at),
  CONSTRAINT orders_status CHECK (status IN ('UNPAID', 'PAID', 'CLOSED')),
  CONSTRAINT orders_amount CHECK (amount_fen > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE order_items (
  order_id   VARCHAR(32)  NOT NULL,
  sku_id     VARCHAR(64)  NOT NULL,
  quantity   INT          NOT NULL,
  PRIMARY KEY (order_id, sku_id),
  KEY order_items_sku (sku_id),
  CONSTRAINT order_items_quantity CHECK (quantity > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The stock ledger. The UNIQUE key turns a duplicated RESERVE, RELEASE or SELL into an error, and the
-- conditional status UPDATE in the same transaction makes sure the error never happens in practice.
CREATE TABLE stock_movements (
  movement_id  BIGINT       NOT NULL AUTO_INCREMENT,
  order_id     VARCHAR(32)  NOT NULL,
  sku_id       VARCHAR(64)  NOT NULL,
  kind         VARCHAR(8)   NOT NULL,
  quantity     INT          NOT NULL,
  created_at   DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (movement_id),
  UNIQUE KEY stock_movements_once (order_id, sku_id, kind),
  KEY stock_movements_sku (sku_id),
  CONSTRAINT stock_movements_kind CHECK (kind IN ('RESERVE', 'RELEASE', 'SELL')),
  CONSTRAINT stock_movements_quantity CHECK (quantity > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- What the order was when placed; compensation checks orders and ledger against it.
CREATE TABLE order_snapshots (
  order_id    VARCHAR(32)  NOT NULL,
  snapshot    TEXT         NOT NULL,
  checksum    CHAR(64)     NOT NULL,
  created_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (order_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
