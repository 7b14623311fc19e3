-- When each kiosk token was last used (its page's socket opened, or stayed open: updated at most
-- once a minute), so `tapgate station kiosk-tokens` can tell a live kiosk from a forgotten one.
ALTER TABLE kiosk_tokens ADD COLUMN last_seen_at INTEGER;
