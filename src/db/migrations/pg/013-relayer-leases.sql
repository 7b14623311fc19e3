-- One active sender per (chain, relayer account) across gateways: see ../013-relayer-leases.sql.
-- expires_at is epoch-ms in the database server's clock (clock_timestamp()), never a gateway's.
CREATE TABLE relayer_leases (
  chain_id   bigint  NOT NULL,
  sender     text    NOT NULL,
  holder     text    NOT NULL,
  epoch      bigint  NOT NULL,
  expires_at bigint  NOT NULL,
  PRIMARY KEY (chain_id, sender)
);

ALTER TABLE chain_txs ADD COLUMN sent_by text;
