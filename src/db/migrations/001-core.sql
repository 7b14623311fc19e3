-- Core off-chain model. Times are Unix epoch milliseconds (INTEGER) so that
-- expiry checks are plain integer comparisons; the API renders them as ISO 8601.

CREATE TABLE teams (
  id           INTEGER PRIMARY KEY,
  name         TEXT    NOT NULL UNIQUE,
  redirect_url TEXT,
  created_at   INTEGER NOT NULL
);

-- Only a SHA-256 of the key is stored; the prefix lets an operator tell keys apart.
CREATE TABLE api_keys (
  id         INTEGER PRIMARY KEY,
  team_id    INTEGER NOT NULL REFERENCES teams(id),
  prefix     TEXT    NOT NULL,
  key_hash   TEXT    NOT NULL UNIQUE,
  label      TEXT,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE INDEX api_keys_team ON api_keys(team_id);

CREATE TABLE chip_groups (
  id         INTEGER PRIMARY KEY,
  team_id    INTEGER NOT NULL REFERENCES teams(id),
  name       TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (team_id, name)
);

CREATE TABLE chips (
  uid          TEXT    PRIMARY KEY CHECK (length(uid) = 14 AND uid = upper(uid)),
  team_id      INTEGER NOT NULL REFERENCES teams(id),
  group_id     INTEGER REFERENCES chip_groups(id),
  kind         TEXT    NOT NULL CHECK (kind IN ('ntag424', 'ntag21x')),
  last_counter INTEGER,
  redirect_url TEXT,
  created_at   INTEGER NOT NULL
);
CREATE INDEX chips_team ON chips(team_id);

-- contract_address is stored EIP-55 checksummed, token_id as a canonical decimal string.
CREATE TABLE tokens (
  id                   INTEGER PRIMARY KEY,
  team_id              INTEGER NOT NULL REFERENCES teams(id),
  chain_id             INTEGER NOT NULL,
  contract_address     TEXT    NOT NULL,
  token_id             TEXT    NOT NULL,
  metadata             TEXT,
  two_tap_claim        INTEGER NOT NULL DEFAULT 0,
  claim_delay_seconds  INTEGER NOT NULL,
  claim_window_seconds INTEGER NOT NULL,
  created_at           INTEGER NOT NULL,
  updated_at           INTEGER NOT NULL,
  UNIQUE (chain_id, contract_address, token_id)
);
CREATE INDEX tokens_team ON tokens(team_id);

-- A chip is linked to at most one token; a token may carry several chips.
CREATE TABLE token_chips (
  token_id  INTEGER NOT NULL REFERENCES tokens(id),
  chip_uid  TEXT    NOT NULL UNIQUE REFERENCES chips(uid),
  linked_at INTEGER NOT NULL,
  PRIMARY KEY (token_id, chip_uid)
);

CREATE TABLE proof_events (
  id             INTEGER PRIMARY KEY,
  team_id        INTEGER NOT NULL REFERENCES teams(id),
  proof_event_id INTEGER NOT NULL,
  name           TEXT    NOT NULL DEFAULT '',
  status         TEXT    NOT NULL CHECK (status IN ('pending-approval', 'future', 'active', 'expired', 'rejected')),
  created_at     INTEGER NOT NULL,
  UNIQUE (team_id, proof_event_id)
);

CREATE TABLE proof_event_chips (
  event_id INTEGER NOT NULL REFERENCES proof_events(id),
  chip_uid TEXT    NOT NULL REFERENCES chips(uid),
  PRIMARY KEY (event_id, chip_uid)
);
CREATE INDEX proof_event_chips_chip ON proof_event_chips(chip_uid);

CREATE TABLE guestbook_contracts (
  id         INTEGER PRIMARY KEY,
  team_id    INTEGER NOT NULL REFERENCES teams(id),
  name       TEXT    NOT NULL,
  symbol     TEXT    NOT NULL,
  chain_id   INTEGER NOT NULL,
  address    TEXT,
  status     TEXT    NOT NULL CHECK (status IN ('pending', 'confirmed')),
  paused     INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  CHECK ((status = 'confirmed') = (address IS NOT NULL))
);
CREATE INDEX guestbook_contracts_team ON guestbook_contracts(team_id);
CREATE UNIQUE INDEX guestbook_contracts_address ON guestbook_contracts(chain_id, address) WHERE address IS NOT NULL;

CREATE TABLE guestbook_events (
  id          INTEGER PRIMARY KEY,
  team_id     INTEGER NOT NULL REFERENCES teams(id),
  contract_id INTEGER NOT NULL REFERENCES guestbook_contracts(id),
  name        TEXT    NOT NULL,
  token_id    TEXT    NOT NULL,
  metadata    TEXT    NOT NULL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  UNIQUE (contract_id, token_id)
);
CREATE INDEX guestbook_events_team ON guestbook_events(team_id);

CREATE TABLE guestbook_event_chips (
  event_id    INTEGER NOT NULL REFERENCES guestbook_events(id),
  chip_uid    TEXT    NOT NULL REFERENCES chips(uid),
  assigned_at INTEGER NOT NULL,
  PRIMARY KEY (event_id, chip_uid)
);
CREATE INDEX guestbook_event_chips_chip ON guestbook_event_chips(chip_uid);

-- refs and otps are keyed by their random text ids and written on the hot
-- path; WITHOUT ROWID keeps each row in its key's b-tree (one write, not two).
-- source says how the tap reached us (operator, phone, station); links_module
-- refs only validate for their own team's API key.
CREATE TABLE refs (
  id            TEXT    PRIMARY KEY,
  chip_uid      TEXT    NOT NULL REFERENCES chips(uid),
  team_id       INTEGER NOT NULL REFERENCES teams(id),
  source        TEXT    NOT NULL,
  authenticated INTEGER NOT NULL,
  links_module  INTEGER NOT NULL DEFAULT 0,
  counter       INTEGER,
  created_at    INTEGER NOT NULL,
  consumed_at   INTEGER
) WITHOUT ROWID;

-- An OTP targets exactly one thing: a token (or, for an unlinked chip, the chip
-- itself), a proof event, or a guestbook event.
CREATE TABLE otps (
  code               TEXT    PRIMARY KEY,
  team_id            INTEGER NOT NULL REFERENCES teams(id),
  ref_id             TEXT    NOT NULL REFERENCES refs(id),
  chip_uid           TEXT    NOT NULL REFERENCES chips(uid),
  type               TEXT    NOT NULL CHECK (type IN ('PHYGITAL_CLAIM', 'PROOF_EVENT', 'GUESTBOOK_EVENT')),
  token_id           INTEGER REFERENCES tokens(id),
  proof_event_id     INTEGER REFERENCES proof_events(id),
  guestbook_event_id INTEGER REFERENCES guestbook_events(id),
  created_at         INTEGER NOT NULL,
  expires_at         INTEGER NOT NULL,
  used_at            INTEGER,
  used_for           TEXT
) WITHOUT ROWID;
CREATE INDEX otps_ref ON otps(ref_id);

CREATE TABLE claim_registrations (
  id         INTEGER PRIMARY KEY,
  token_id   INTEGER NOT NULL REFERENCES tokens(id),
  recipient  TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  allowed_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at    INTEGER
);
CREATE INDEX claim_registrations_token ON claim_registrations(token_id, recipient);

-- Every tap, accepted or not. reason is 'accepted' or a stable rejection code.
CREATE TABLE tap_log (
  id            INTEGER PRIMARY KEY,
  at            INTEGER NOT NULL,
  source        TEXT    NOT NULL,
  chip_uid      TEXT,
  team_id       INTEGER,
  accepted      INTEGER NOT NULL,
  authenticated INTEGER NOT NULL,
  reason        TEXT    NOT NULL,
  counter       INTEGER,
  ref_id        TEXT,
  detail        TEXT
);
CREATE INDEX tap_log_chip ON tap_log(chip_uid, at);
