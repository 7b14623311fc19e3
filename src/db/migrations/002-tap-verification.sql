-- Tap verification: chip profiles (URL layout, mode, keys), per-chip key
-- material, and stations. Key columns hold sealed blobs (AES-256-GCM under the
-- gateway secret, see src/keys/sealKey.ts), never raw keys.

CREATE TABLE chip_profiles (
  id         INTEGER PRIMARY KEY,
  team_id    INTEGER NOT NULL REFERENCES teams(id),
  name       TEXT    NOT NULL,
  mode       TEXT    NOT NULL CHECK (mode IN ('aes', 'lrp')),
  -- JSON SunLayout: parameter names or SDM offsets; NULL = the default parameter names.
  layout     TEXT,
  key_scheme TEXT    NOT NULL CHECK (key_scheme IN ('static', 'per_chip', 'an10922', 'sdm_backend', 'boltcard')),
  meta_key   BLOB,
  file_key   BLOB,
  master_key BLOB,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (team_id, name)
);

ALTER TABLE chips ADD COLUMN profile_id INTEGER REFERENCES chip_profiles(id);
-- Chips that answer anticollision with a random ID: the reader's RF UID tells nothing.
ALTER TABLE chips ADD COLUMN random_uid INTEGER NOT NULL DEFAULT 0;
-- Per-chip SDM file read key (key_scheme per_chip), sealed.
ALTER TABLE chips ADD COLUMN file_key BLOB;
-- Bolt Card key version (key_scheme boltcard).
ALTER TABLE chips ADD COLUMN key_version INTEGER NOT NULL DEFAULT 1;

CREATE TABLE stations (
  id         INTEGER PRIMARY KEY,
  team_id    INTEGER NOT NULL REFERENCES teams(id),
  name       TEXT    NOT NULL,
  prefix     TEXT    NOT NULL,
  token_hash TEXT    NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
