-- One active sender per (chain, relayer account) across gateway processes (docs/chain.md, "Several
-- gateways"). The holder is a random id per relayer instance; `epoch` grows by one each time the lease
-- changes hands, and every relayer write that matters checks (holder, epoch) in its own transaction, so
-- a holder that lost the lease (paused, partitioned, too slow) cannot write after its successor.
-- expires_at is epoch-ms in the database's clock.
CREATE TABLE relayer_leases (
  chain_id   INTEGER NOT NULL,
  sender     TEXT    NOT NULL,
  holder     TEXT    NOT NULL,
  epoch      INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (chain_id, sender)
) WITHOUT ROWID;

-- Which relayer instance (its lease holder id) marked the transaction sent: who sent what, after a takeover.
ALTER TABLE chain_txs ADD COLUMN sent_by TEXT;
