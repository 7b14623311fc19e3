-- The token's outside moves known when a transfer was accepted: see ../016-transfer-known-outside-moves.sql.
ALTER TABLE transfers ADD COLUMN known_outside_moves bigint;
