-- Kiosks (issue 10): what a station is for, check-ins, the per-station event feed that kiosk
-- pages follow, kiosk tokens, staff PINs and sessions, and an attendee wallet per chip.

-- mode NULL: no mode set yet (taps verify and mint refs, as before stations had modes).
ALTER TABLE stations ADD COLUMN mode TEXT CHECK (mode IN ('checkin', 'claim', 'closed'));
-- The guestbook event a check-in station counts and mints (mode 'checkin').
ALTER TABLE stations ADD COLUMN event_id INTEGER REFERENCES guestbook_events(id);
-- The gateway's own readers (tapgate serve's in-process station) have a station row too, so they
-- get a mode and a feed; it has no usable token (its token_hash is random and never handed out).
ALTER TABLE stations ADD COLUMN in_process INTEGER NOT NULL DEFAULT 0;
-- "Test chip" taps: until this time, an accepted tap at the station is shown and logged, never counted.
ALTER TABLE stations ADD COLUMN test_until INTEGER;

-- An attendee's wallet, when known (import file, `chip set --wallet`): a check-in mints to it.
ALTER TABLE chips ADD COLUMN wallet TEXT;

-- One check-in per chip per event (undone ones excepted). mint_id: the guestbook mint it started,
-- NULL while the token waits to be collected (no wallet yet) or after a manual check-in without one.
CREATE TABLE check_ins (
  id          INTEGER PRIMARY KEY,
  event_id    INTEGER NOT NULL REFERENCES guestbook_events(id),
  chip_uid    TEXT    NOT NULL REFERENCES chips(uid),
  station_id  INTEGER NOT NULL REFERENCES stations(id),
  manual      INTEGER NOT NULL DEFAULT 0,
  mint_id     INTEGER REFERENCES guestbook_mints(id),
  -- The transaction of its latest mint: kept when a reverted mint's guestbook_mints row is given
  -- back (mint_id NULL again), so the feed can show "failed" and staff can retry it.
  chain_tx_id INTEGER REFERENCES chain_txs(id),
  created_at  INTEGER NOT NULL,
  undone_at   INTEGER
);
CREATE UNIQUE INDEX check_ins_once ON check_ins(event_id, chip_uid) WHERE undone_at IS NULL;
CREATE INDEX check_ins_station ON check_ins(station_id, created_at);
CREATE INDEX check_ins_event ON check_ins(event_id, created_at);
CREATE INDEX check_ins_tx ON check_ins(chain_tx_id) WHERE chain_tx_id IS NOT NULL;

-- The durable per-station feed: every tap outcome, check-in, reader status, transaction step, mode
-- change and staff action, in order. A kiosk resumes from the last id it saw; every kiosk of a
-- station reads the same rows. data is JSON (src/kiosk/protocol.ts: StationEventData).
CREATE TABLE station_events (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  station_id INTEGER NOT NULL REFERENCES stations(id),
  kind       TEXT    NOT NULL,
  data       TEXT    NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX station_events_station ON station_events(station_id, id);

-- Kiosk page tokens: one or more per station, stored hashed like API keys (tgk_ + 32 characters).
CREATE TABLE kiosk_tokens (
  id         INTEGER PRIMARY KEY,
  station_id INTEGER NOT NULL REFERENCES stations(id),
  prefix     TEXT    NOT NULL,
  token_hash TEXT    NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);

-- The staff PIN of a station: scrypt (salt and parameters in pin_hash), wrong tries and lockout.
CREATE TABLE staff_pins (
  station_id   INTEGER PRIMARY KEY REFERENCES stations(id),
  pin_hash     TEXT    NOT NULL,
  failed_tries INTEGER NOT NULL DEFAULT 0,
  locked_until INTEGER,
  updated_at   INTEGER NOT NULL
);

-- Staff sessions: hashed bearer tokens that end after a minute without use.
CREATE TABLE staff_sessions (
  token_hash   TEXT    PRIMARY KEY,
  station_id   INTEGER NOT NULL REFERENCES stations(id),
  created_at   INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  ended_at     INTEGER
) WITHOUT ROWID;
