-- Which station watches a chain transaction, for which check-in or claim, with no foreign keys: see ../014-tx-watchers.sql.
ALTER TABLE chain_txs ADD COLUMN station_id bigint;
ALTER TABLE chain_txs ADD COLUMN check_in_id bigint;
ALTER TABLE chain_txs ADD COLUMN claim_id bigint;

UPDATE chain_txs SET station_id = c.station_id, check_in_id = c.id
  FROM check_ins c WHERE c.chain_tx_id = chain_txs.id;
UPDATE chain_txs SET station_id = c.station_id, check_in_id = c.check_in_id, claim_id = c.id
  FROM claims c WHERE c.chain_tx_id = chain_txs.id;
UPDATE chain_txs SET station_id = c.station_id, check_in_id = c.check_in_id, claim_id = c.id
  FROM claims c JOIN transfers t ON t.id = c.transfer_id WHERE t.chain_tx_id = chain_txs.id;
