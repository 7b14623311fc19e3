-- The guest list (issue 19): people, not only chips. An attendee belongs to one guestbook event and
-- is known by a ticket code unique within it; a chip belongs to at most one attendee per event.
-- Runs with foreign keys off (migrate.ts), as SQLite's table rebuild asks, and is checked before commit.

CREATE TABLE attendees (
  id              INTEGER PRIMARY KEY,
  event_id        INTEGER NOT NULL REFERENCES guestbook_events(id),
  name            TEXT    NOT NULL,
  email           TEXT,
  ticket_type     TEXT    NOT NULL,
  ticket_code     TEXT    NOT NULL,
  wallet          TEXT,
  note            TEXT,
  needs_attention INTEGER NOT NULL DEFAULT 0,
  -- Name, email and ticket code folded for staff search (lower case, accents off: "zoe" finds Zoë), so
  -- both engines match the same rows with one LIKE.
  search          TEXT    NOT NULL,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  UNIQUE (event_id, ticket_code)
);
CREATE INDEX attendees_event_name ON attendees(event_id, name);

-- A chip bound to an attendee: from the import (station NULL) or at a bind station. A rebind ends the
-- old binding (unbound_at), so the old chip stops opening the door for this event at once.
CREATE TABLE attendee_chips (
  id          INTEGER PRIMARY KEY,
  event_id    INTEGER NOT NULL REFERENCES guestbook_events(id),
  attendee_id INTEGER NOT NULL REFERENCES attendees(id),
  chip_uid    TEXT    NOT NULL REFERENCES chips(uid),
  station_id  INTEGER REFERENCES stations(id),
  bound_at    INTEGER NOT NULL,
  unbound_at  INTEGER
);
CREATE UNIQUE INDEX attendee_chips_bound ON attendee_chips(event_id, chip_uid) WHERE unbound_at IS NULL;
CREATE INDEX attendee_chips_attendee ON attendee_chips(attendee_id);
-- At most one wristband bound at a door per guest: the same ticket bound at two doors at once binds one
-- chip and refuses the other. Imported chips (station NULL) are not limited; a rebind unbinds first.
CREATE UNIQUE INDEX attendee_chips_door ON attendee_chips(event_id, attendee_id) WHERE unbound_at IS NULL AND station_id IS NOT NULL;

-- A check-in is a chip's or an attendee's (a guest found by name has no chip yet): chip_uid becomes
-- optional, attendee_id joins, and left_at records a guest who went out (NULL: inside). One check-in per
-- attendee per event, as per chip.
CREATE TABLE check_ins_015 (
  id          INTEGER PRIMARY KEY,
  event_id    INTEGER NOT NULL REFERENCES guestbook_events(id),
  chip_uid    TEXT    REFERENCES chips(uid),
  station_id  INTEGER NOT NULL REFERENCES stations(id),
  manual      INTEGER NOT NULL DEFAULT 0,
  mint_id     INTEGER REFERENCES guestbook_mints(id),
  -- The transaction of its latest mint: kept when a reverted mint's guestbook_mints row is given
  -- back (mint_id NULL again), so the feed can show "failed" and staff can retry it.
  chain_tx_id INTEGER REFERENCES chain_txs(id),
  created_at  INTEGER NOT NULL,
  undone_at   INTEGER,
  attendee_id INTEGER REFERENCES attendees(id),
  left_at     INTEGER,
  CHECK (chip_uid IS NOT NULL OR attendee_id IS NOT NULL)
);
INSERT INTO check_ins_015 (id, event_id, chip_uid, station_id, manual, mint_id, chain_tx_id, created_at, undone_at)
  SELECT id, event_id, chip_uid, station_id, manual, mint_id, chain_tx_id, created_at, undone_at FROM check_ins;
DROP TABLE check_ins;
ALTER TABLE check_ins_015 RENAME TO check_ins;
CREATE UNIQUE INDEX check_ins_once ON check_ins(event_id, chip_uid) WHERE undone_at IS NULL;
CREATE UNIQUE INDEX check_ins_attendee_once ON check_ins(event_id, attendee_id) WHERE undone_at IS NULL;
CREATE INDEX check_ins_station ON check_ins(station_id, created_at);
CREATE INDEX check_ins_event ON check_ins(event_id, created_at);
CREATE INDEX check_ins_tx ON check_ins(chain_tx_id) WHERE chain_tx_id IS NOT NULL;

-- Going out and coming back in after the check-in (its own entry is the check-in's created_at).
CREATE TABLE door_passes (
  id          INTEGER PRIMARY KEY,
  check_in_id INTEGER NOT NULL REFERENCES check_ins(id),
  station_id  INTEGER NOT NULL REFERENCES stations(id),
  direction   TEXT    NOT NULL CHECK (direction IN ('in', 'out')),
  created_at  INTEGER NOT NULL
);
CREATE INDEX door_passes_check_in ON door_passes(check_in_id, created_at);

-- Taps a door turned away, counted apart from check-ins: a ticket type this door does not admit, a
-- second entry where the event allows none, a chip on nobody's ticket at an event with a guest list.
CREATE TABLE door_refusals (
  id          INTEGER PRIMARY KEY,
  event_id    INTEGER NOT NULL REFERENCES guestbook_events(id),
  station_id  INTEGER NOT NULL REFERENCES stations(id),
  attendee_id INTEGER REFERENCES attendees(id),
  chip_uid    TEXT,
  reason      TEXT    NOT NULL CHECK (reason IN ('not_allowed', 'no_reentry', 'not_on_list')),
  created_at  INTEGER NOT NULL
);
CREATE INDEX door_refusals_event ON door_refusals(event_id, reason);

-- Whether a guest who went out may come back in, and what the public screen calls a guest: the first
-- name only (the default: a name on a screen in a queue is enough) or the whole name.
ALTER TABLE guestbook_events ADD COLUMN reentry INTEGER NOT NULL DEFAULT 1;
ALTER TABLE guestbook_events ADD COLUMN public_names TEXT NOT NULL DEFAULT 'first' CHECK (public_names IN ('first', 'full'));

-- Two more station modes (a bind station ties wristbands to guests; an exit station records leaving),
-- the ticket types a door admits (a JSON array; NULL: every type), and the guest a bind station is armed
-- with: its next tap binds that guest (rebind: after unbinding their chips), until bind_until. In the
-- database, so a tap on any gateway finds it; taken by a conditional UPDATE, so one tap binds.
CREATE TABLE stations_015 (
  id         INTEGER PRIMARY KEY,
  team_id    INTEGER NOT NULL REFERENCES teams(id),
  name       TEXT    NOT NULL,
  prefix     TEXT    NOT NULL,
  token_hash TEXT    NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER,
  mode       TEXT    CHECK (mode IN ('checkin', 'bind', 'exit', 'claim', 'closed')),
  event_id   INTEGER REFERENCES guestbook_events(id),
  in_process INTEGER NOT NULL DEFAULT 0,
  test_until INTEGER,
  ticket_types     TEXT,
  bind_attendee_id INTEGER REFERENCES attendees(id),
  bind_rebind      INTEGER NOT NULL DEFAULT 0,
  bind_until       INTEGER
);
INSERT INTO stations_015 (id, team_id, name, prefix, token_hash, created_at, revoked_at, mode, event_id, in_process, test_until)
  SELECT id, team_id, name, prefix, token_hash, created_at, revoked_at, mode, event_id, in_process, test_until FROM stations;
DROP TABLE stations;
ALTER TABLE stations_015 RENAME TO stations;
