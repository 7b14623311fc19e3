-- PhygitalToken signatures now carry the token's own nonce, which every move
-- of the token advances (docs/contracts.md), instead of the recipient's. This
-- is the next one our relayed transfers sign with, per token; claim_nonces
-- (per recipient) has no reader left.
CREATE TABLE token_nonces (
  chain_id   INTEGER NOT NULL,
  contract   TEXT    NOT NULL,
  token_id   TEXT    NOT NULL,
  next_nonce INTEGER NOT NULL,
  PRIMARY KEY (chain_id, contract, token_id)
) WITHOUT ROWID;
DROP TABLE claim_nonces;
