-- Facts about the gateway itself, one row each. secret_check: the fixed label
-- "tapgate secret check" sealed under the gateway secret (src/keys/secretCheck.ts), so a
-- start with another secret than the one the chip keys were sealed under is caught
-- before anything is served or sealed.
CREATE TABLE gateway_meta (
  name  TEXT PRIMARY KEY,
  value BLOB NOT NULL
) WITHOUT ROWID;
