-- Issue 28: the web console. A team's operator signs in with a one-time link (`tapgate console-link`,
-- or the demo team's first start) and gets a session cookie. Both tokens are stored as their SHA-256
-- only, like API keys: a copy of the database signs nobody in.

-- A sign-in link: used once (used_at, set by a conditional UPDATE: of two sign-ins with one link, one
-- wins), an hour after created_at at most (expires_at).
CREATE TABLE console_links (
  id         INTEGER PRIMARY KEY,
  team_id    INTEGER NOT NULL REFERENCES teams(id),
  token_hash TEXT    NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at    INTEGER
);

-- A console session (the tapgate_console cookie): its link's team, 12 hours, revocable one by one
-- (sign out) or all of a team's (`console-link --revoke-sessions`).
CREATE TABLE console_sessions (
  id         INTEGER PRIMARY KEY,
  team_id    INTEGER NOT NULL REFERENCES teams(id),
  link_id    INTEGER NOT NULL REFERENCES console_links(id),
  token_hash TEXT    NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE INDEX console_sessions_team ON console_sessions(team_id) WHERE revoked_at IS NULL;

-- The station a tap came through (station taps only; NULL for a phone's, an operator's): the
-- console's tap log filters by it and shows each station's last tap and taps today. No foreign key,
-- as for the log's other columns: the log keeps what happened.
ALTER TABLE tap_log ADD COLUMN station_id INTEGER;
CREATE INDEX tap_log_station ON tap_log(station_id, at) WHERE station_id IS NOT NULL;
-- The console's "taps today" of a team reads the log from a time on.
CREATE INDEX tap_log_at ON tap_log(at);
