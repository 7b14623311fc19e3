-- NTAG 21x chips: whether the chip mirrors its NFC counter. 1: every tap must carry
-- one; 0: the chip mirrors its UID only (a tap with a counter is not from it);
-- NULL: not declared, so a counter is required once the chip has presented one.
ALTER TABLE chips ADD COLUMN counter_mirror INTEGER CHECK (counter_mirror IN (0, 1));
