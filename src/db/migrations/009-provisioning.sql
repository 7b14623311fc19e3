-- Provisioning (issue 12): the journal of each run that turns a blank NTAG 424 DNA into a tapgate
-- chip, or takes one back to factory. The new keys are sealed and committed here BEFORE the first
-- ChangeKey, so a card pulled mid-run (or a crash) never leaves a key only the card knows. Never a
-- key in clear: keys are AES-256-GCM blobs under the gateway secret, bound to `provisioning:<id>:<slot>`.

CREATE TABLE chip_provisioning (
  id            INTEGER PRIMARY KEY,
  -- The chip's real UID (GetVersion, or GetCardUID when the chip answers with a random ID).
  uid           TEXT    NOT NULL,
  team_id       INTEGER NOT NULL REFERENCES teams(id),
  profile_id    INTEGER REFERENCES chip_profiles(id),
  kind          TEXT    NOT NULL CHECK (kind IN ('provision', 'reset')),
  state         TEXT    NOT NULL CHECK (state IN ('pending', 'provisioned', 'resetting', 'factory', 'failed')),
  mode          TEXT    NOT NULL CHECK (mode IN ('aes', 'lrp')),
  random_id     INTEGER NOT NULL DEFAULT 0,
  -- The 32-bit key version of the run (chips.key_version); the chip holds its low byte, never 00.
  key_version   INTEGER NOT NULL,
  -- JSON [v0, v1, v2, v3, v4]: the version each slot must end at (reset: all 0).
  target_versions TEXT  NOT NULL,
  -- JSON [v0, …, v4]: the version each slot was last seen or written at.
  slot_versions TEXT    NOT NULL,
  -- Sealed target keys 0–4 (reset: null, the target is the zero key) and the keys the chip held before.
  key0 BLOB, key1 BLOB, key2 BLOB, key3 BLOB, key4 BLOB,
  old0 BLOB, old1 BLOB, old2 BLOB, old3 BLOB, old4 BLOB,
  -- The printable plan (URL, NDEF, file settings, slot plan): no key bytes.
  plan          TEXT    NOT NULL,
  -- Why a run stopped: step, status word, message (state failed or a pending run that stopped).
  failure       TEXT,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL
);
CREATE INDEX chip_provisioning_uid ON chip_provisioning (uid, id);

CREATE TABLE chip_provisioning_steps (
  id            INTEGER PRIMARY KEY,
  run_id        INTEGER NOT NULL REFERENCES chip_provisioning(id),
  step          TEXT    NOT NULL,
  -- The card's status word (hex), or null when the step ended before an answer (card removed).
  sw            TEXT,
  ms            INTEGER NOT NULL,
  ok            INTEGER NOT NULL,
  detail        TEXT,
  at            INTEGER NOT NULL
);
CREATE INDEX chip_provisioning_steps_run ON chip_provisioning_steps (run_id, id);
