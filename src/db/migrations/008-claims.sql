-- Claim stations (issue 11): a tap at a claim station (or a check-in without a known wallet) opens a
-- claim: the token of the tapped chip (kind 'token') or the event's guestbook token (kind
-- 'guestbook') waits for an address, given at the kiosk or on a phone through a one-time link.

CREATE TABLE claims (
  id                 INTEGER PRIMARY KEY,
  station_id         INTEGER NOT NULL REFERENCES stations(id),
  kind               TEXT    NOT NULL CHECK (kind IN ('token', 'guestbook')),
  chip_uid           TEXT    NOT NULL REFERENCES chips(uid),
  token_id           INTEGER REFERENCES tokens(id),
  guestbook_event_id INTEGER REFERENCES guestbook_events(id),
  check_in_id        INTEGER REFERENCES check_ins(id),
  -- The tap's OTP that authorizes the claim: issued by the gateway when it consumed the tap's ref,
  -- and never sent anywhere (the kiosk and the phone hold claim ids and link tokens, not OTPs).
  otp_code           TEXT    NOT NULL REFERENCES otps(code),
  -- open: waiting for an address; opened: its link was opened on a phone; registered: a 2-tap
  -- token's first tap registered an address; claimed: the transfer or mint was accepted.
  step               TEXT    NOT NULL CHECK (step IN ('open', 'opened', 'registered', 'claimed')),
  -- The one-time link: sha256 of its 128-bit token (never the token). A new link replaces the old.
  link_hash          TEXT    UNIQUE,
  -- sha256 of the secret the phone that opened the link holds: the link is that phone's from then on.
  phone_hash         TEXT,
  -- How the address came: known (the gateway had one), phone, kiosk.
  via                TEXT    CHECK (via IN ('known', 'phone', 'kiosk')),
  recipient          TEXT,
  transfer_id        INTEGER REFERENCES transfers(id),
  guestbook_mint_id  INTEGER,
  chain_tx_id        INTEGER REFERENCES chain_txs(id),
  registration_id    INTEGER REFERENCES claim_registrations(id),
  created_at         INTEGER NOT NULL,
  -- The OTP's expiry: the link and the kiosk's address entry end with it.
  expires_at         INTEGER NOT NULL,
  opened_at          INTEGER,
  claimed_at         INTEGER
);
CREATE INDEX claims_station ON claims(station_id, created_at);
CREATE INDEX claims_tx ON claims(chain_tx_id) WHERE chain_tx_id IS NOT NULL;
CREATE INDEX claims_transfer ON claims(transfer_id) WHERE transfer_id IS NOT NULL;

-- Product images the kiosk and the phone page show, fetched once and kept in <dataDir>/media/<key>
-- so a card shows offline. key: sha256 of the URL (hex).
CREATE TABLE media (
  key          TEXT    PRIMARY KEY,
  url          TEXT    NOT NULL,
  content_type TEXT,
  bytes        INTEGER,
  fetched_at   INTEGER,
  -- The last failed fetch and why: retried after a while, shown to staff.
  failed_at    INTEGER,
  error        TEXT,
  created_at   INTEGER NOT NULL
) WITHOUT ROWID;
