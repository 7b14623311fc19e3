-- Issue 25: a guest whose order is not paid (pretix "pending", Hi.Events AWAITING_PAYMENT) stays on the
-- list but the door refuses them "not paid", unless the event admits unpaid guests. 1: paid (every guest
-- stored before this migration, and every tool that lists only valid tickets).
ALTER TABLE attendees ADD COLUMN paid INTEGER NOT NULL DEFAULT 1;
ALTER TABLE guestbook_events ADD COLUMN admit_unpaid INTEGER NOT NULL DEFAULT 0;

-- A refusal may now be not_paid: SQLite changes a CHECK by copying the table (nothing references it).
CREATE TABLE door_refusals_017 (
  id          INTEGER PRIMARY KEY,
  event_id    INTEGER NOT NULL REFERENCES guestbook_events(id),
  station_id  INTEGER NOT NULL REFERENCES stations(id),
  attendee_id INTEGER REFERENCES attendees(id),
  chip_uid    TEXT,
  reason      TEXT    NOT NULL CHECK (reason IN ('not_allowed', 'no_reentry', 'not_on_list', 'not_paid')),
  created_at  INTEGER NOT NULL
);
INSERT INTO door_refusals_017 (id, event_id, station_id, attendee_id, chip_uid, reason, created_at)
  SELECT id, event_id, station_id, attendee_id, chip_uid, reason, created_at FROM door_refusals;
DROP TABLE door_refusals;
ALTER TABLE door_refusals_017 RENAME TO door_refusals;
CREATE INDEX door_refusals_event ON door_refusals(event_id, reason);
