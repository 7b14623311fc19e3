-- Which station watches a chain transaction, and for which of its check-ins or claims: the kiosk's
-- progress rows (queued, sent, confirmed, failed) are written from the outbox row alone, so the relayer
-- never looks up check-ins and claims to find where a step goes. NULL station: nobody watches (an API
-- mint, a deploy). No foreign keys: check_ins and claims reference chain_txs already, and so does a
-- station's event through its guestbook's deploy; a cycle of references would leave `tapgate db copy`
-- no table to start with. The outbox is written only by the code that writes those rows, in their transaction.
ALTER TABLE chain_txs ADD COLUMN station_id INTEGER;
ALTER TABLE chain_txs ADD COLUMN check_in_id INTEGER;
ALTER TABLE chain_txs ADD COLUMN claim_id INTEGER;

-- What the relayer used to find at each step, recorded once for the transactions already stored:
-- a check-in's mint, then a claim's mint or transfer (a claim's own check-in kept), then a transfer a
-- claim followed after a re-sign (the claim's chain_tx_id was only moved at the new one's first step).
UPDATE chain_txs SET station_id = c.station_id, check_in_id = c.id
  FROM check_ins c WHERE c.chain_tx_id = chain_txs.id;
UPDATE chain_txs SET station_id = c.station_id, check_in_id = c.check_in_id, claim_id = c.id
  FROM claims c WHERE c.chain_tx_id = chain_txs.id;
UPDATE chain_txs SET station_id = c.station_id, check_in_id = c.check_in_id, claim_id = c.id
  FROM claims c JOIN transfers t ON t.id = c.transfer_id WHERE t.chain_tx_id = chain_txs.id;
