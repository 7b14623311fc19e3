-- When each kiosk token was last used (its page's socket opened, or stayed open: updated at most
-- once a minute), so `tapgate station kiosk-tokens` can tell a live kiosk from a forgotten one.
ALTER TABLE kiosk_tokens ADD COLUMN last_seen_at INTEGER;

-- Staff PIN locks in a row (since the last right PIN or new PIN): each lock lasts twice the one
-- before, up to a day, and a gateway restart must not start guessing over at 5 minutes.
ALTER TABLE staff_pins ADD COLUMN consecutive_locks INTEGER NOT NULL DEFAULT 0;
