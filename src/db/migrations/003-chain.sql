-- The chain half: the relayer's durable outbox, nonces, fee data, our own
-- contracts, and what each request put on chain. Addresses are EIP-55
-- checksummed; wei amounts are decimal TEXT (they overflow INTEGER).

-- Every transaction the gateway signed, one row per (chain, sender, nonce).
-- The row is written in the same database transaction as the request that
-- caused it, before anything is broadcast, so an accepted request is never
-- lost and a nonce is never used twice.
CREATE TABLE chain_txs (
  id                       INTEGER PRIMARY KEY,
  chain_id                 INTEGER NOT NULL,
  sender                   TEXT    NOT NULL,
  nonce                    INTEGER NOT NULL,
  kind                     TEXT    NOT NULL CHECK (kind IN ('deploy_phygital', 'deploy_guestbook', 'transfer', 'guestbook_mint', 'pause', 'metadata_refresh')),
  -- NULL for a contract deployment; data is then the init code.
  to_address               TEXT,
  data                     TEXT    NOT NULL,
  gas                      INTEGER NOT NULL,
  -- The current attempt (a fee replacement re-signs the same nonce).
  max_fee_per_gas          TEXT    NOT NULL,
  max_priority_fee_per_gas TEXT    NOT NULL,
  raw_tx                   TEXT    NOT NULL,
  tx_hash                  TEXT    NOT NULL,
  initial_tx_hash          TEXT    NOT NULL UNIQUE,
  -- queued: not yet accepted by an RPC; sent: accepted, no receipt yet;
  -- mined: has a receipt (succeeded or reverted).
  status                   TEXT    NOT NULL CHECK (status IN ('queued', 'sent', 'mined')),
  reverted                 INTEGER,
  block_number             INTEGER,
  -- Seconds; a restored embedded chain replays the tx at this timestamp.
  block_timestamp          INTEGER,
  contract_address         TEXT,
  created_at               INTEGER NOT NULL,
  sent_at                  INTEGER,
  mined_at                 INTEGER,
  last_error               TEXT,
  UNIQUE (chain_id, sender, nonce),
  CHECK ((status = 'mined') = (block_number IS NOT NULL))
);
CREATE INDEX chain_txs_open ON chain_txs(chain_id, nonce) WHERE status <> 'mined';

-- Every signed version of a transaction that was broadcast. Any of them may
-- be the one that gets mined, so receipts are looked up for all.
CREATE TABLE chain_tx_attempts (
  tx_hash         TEXT    PRIMARY KEY,
  chain_tx_id     INTEGER NOT NULL REFERENCES chain_txs(id),
  raw_tx          TEXT    NOT NULL,
  max_fee_per_gas TEXT    NOT NULL,
  created_at      INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX chain_tx_attempts_tx ON chain_tx_attempts(chain_tx_id);

CREATE TABLE relayer_nonces (
  chain_id   INTEGER NOT NULL,
  sender     TEXT    NOT NULL,
  next_nonce INTEGER NOT NULL,
  PRIMARY KEY (chain_id, sender)
) WITHOUT ROWID;

-- The last fee data and head block seen per chain: requests are signed with
-- these while the RPC is unreachable.
CREATE TABLE chain_heads (
  chain_id                 INTEGER PRIMARY KEY,
  block_number             INTEGER NOT NULL,
  max_fee_per_gas          TEXT    NOT NULL,
  max_priority_fee_per_gas TEXT    NOT NULL,
  updated_at               INTEGER NOT NULL
);

-- The next claimNonces[recipient] our relayed transfers sign with, per contract.
CREATE TABLE claim_nonces (
  chain_id   INTEGER NOT NULL,
  contract   TEXT    NOT NULL,
  recipient  TEXT    NOT NULL,
  next_nonce INTEGER NOT NULL,
  PRIMARY KEY (chain_id, contract, recipient)
) WITHOUT ROWID;

-- Phygital (ERC-721) contracts of a team. address is known before the deploy
-- is mined (it follows from the sender and nonce); deploy_tx_id is NULL for a
-- contract deployed elsewhere and only registered here.
CREATE TABLE phygital_contracts (
  id           INTEGER PRIMARY KEY,
  team_id      INTEGER NOT NULL REFERENCES teams(id),
  name         TEXT    NOT NULL,
  symbol       TEXT    NOT NULL,
  chain_id     INTEGER NOT NULL,
  address      TEXT    NOT NULL,
  deploy_tx_id INTEGER REFERENCES chain_txs(id),
  created_at   INTEGER NOT NULL,
  UNIQUE (chain_id, address),
  UNIQUE (team_id, name, chain_id)
);

-- A guestbook deployed by us: planned_address is where it will be once mined;
-- address stays NULL until then (the API shows null while pending).
ALTER TABLE guestbook_contracts ADD COLUMN planned_address TEXT;
ALTER TABLE guestbook_contracts ADD COLUMN deploy_tx_id INTEGER REFERENCES chain_txs(id);

-- Set once a mint of the token is queued by us (or seen on chain), so the next
-- transfer calls claimNFT rather than mintNFT.
ALTER TABLE tokens ADD COLUMN minted INTEGER NOT NULL DEFAULT 0;

-- One row per accepted transfer request. chain_tx_id moves to the new
-- transaction when the relayer has to re-sign (see src/relayer/recoverTransfer.ts).
CREATE TABLE transfers (
  id                    INTEGER PRIMARY KEY,
  token_id              INTEGER NOT NULL REFERENCES tokens(id),
  team_id               INTEGER NOT NULL REFERENCES teams(id),
  recipient             TEXT    NOT NULL,
  method                TEXT    NOT NULL CHECK (method IN ('mintNFT', 'claimNFT')),
  via                   TEXT    NOT NULL CHECK (via IN ('api_key', 'otp', 'self_service')),
  otp_code              TEXT,
  claim_registration_id INTEGER REFERENCES claim_registrations(id),
  chain_tx_id           INTEGER NOT NULL REFERENCES chain_txs(id),
  resigned              INTEGER NOT NULL DEFAULT 0,
  created_at            INTEGER NOT NULL
);
CREATE INDEX transfers_token ON transfers(token_id);
CREATE INDEX transfers_tx ON transfers(chain_tx_id);

-- One row per accepted guestbook mint. A self mint (OTP) names its chip, and a
-- chip mints once per event; API-key mints are once per recipient per event.
CREATE TABLE guestbook_mints (
  id          INTEGER PRIMARY KEY,
  event_id    INTEGER NOT NULL REFERENCES guestbook_events(id),
  recipient   TEXT    NOT NULL,
  chip_uid    TEXT    REFERENCES chips(uid),
  otp_code    TEXT,
  chain_tx_id INTEGER NOT NULL REFERENCES chain_txs(id),
  created_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX guestbook_mints_chip ON guestbook_mints(event_id, chip_uid) WHERE chip_uid IS NOT NULL;
CREATE UNIQUE INDEX guestbook_mints_recipient ON guestbook_mints(event_id, recipient);

-- EIP-712 self-service requests already applied: each signature works once.
CREATE TABLE used_signatures (
  digest  TEXT    PRIMARY KEY,
  used_at INTEGER NOT NULL
) WITHOUT ROWID;
