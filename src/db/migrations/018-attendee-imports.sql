-- A guest list import in progress (issue 24): its rows are checked and staged here in short transactions,
-- then moved onto the list in chunks, so a 2-million-row file never holds the write lock for longer than
-- a chunk and a door tap gets through between two. 'staging': being read and checked, nothing on the list
-- yet (dropped on any error, or found at start-up after a crash); 'applying': every row checked, being moved
-- (each chunk leaves this table in the transaction that writes it to the list; resumed at start-up).
CREATE TABLE attendee_imports (
  id         INTEGER PRIMARY KEY,
  event_id   INTEGER NOT NULL REFERENCES guestbook_events(id),
  state      TEXT    NOT NULL CHECK (state IN ('staging', 'applying')),
  created_at INTEGER NOT NULL,
  -- Each chunk's time: an import untouched for a minute has no process working on it any more.
  touched_at INTEGER NOT NULL
);

-- One checked row of the file. needs_attention NULL: the file has no such column (keep what is stored).
-- The unique indexes find a ticket code or a chip given twice in the file without holding the file's codes in memory.
CREATE TABLE attendee_import_rows (
  id              INTEGER PRIMARY KEY,
  import_id       INTEGER NOT NULL REFERENCES attendee_imports(id),
  line            INTEGER NOT NULL,
  name            TEXT    NOT NULL,
  email           TEXT,
  ticket_type     TEXT    NOT NULL,
  ticket_code     TEXT    NOT NULL,
  wallet          TEXT,
  note            TEXT,
  needs_attention INTEGER,
  -- 0: the order is not paid (017's attendees.paid, carried onto the list as the file says).
  paid            INTEGER NOT NULL DEFAULT 1,
  chip_uid        TEXT,
  chip_column     TEXT,
  search          TEXT    NOT NULL
);
-- Chunks are taken in file order: each chunk's statements read a range of this index, not the whole import.
CREATE INDEX attendee_import_rows_order ON attendee_import_rows(import_id, id);
CREATE UNIQUE INDEX attendee_import_rows_ticket ON attendee_import_rows(import_id, ticket_code);
CREATE UNIQUE INDEX attendee_import_rows_chip ON attendee_import_rows(import_id, chip_uid) WHERE chip_uid IS NOT NULL;

-- The export's keyset pages read (event_id, name, id) in order; the id spelled out, as PostgreSQL's index has it
-- (there the name's collation had to change), though SQLite's (event_id, name) already ended in the rowid.
DROP INDEX attendees_event_name;
CREATE INDEX attendees_event_name ON attendees(event_id, name, id);
