-- Provisioning (issue 12): the URL template a profile's chips are written with, e.g.
-- https://tap.example/t?e={picc}&c={mac}. Kept with the layout so the chip and the gateway read
-- the same offsets; checked against the layout whenever either changes. NULL: no template stored
-- (chip provision then needs --url).
ALTER TABLE chip_profiles ADD COLUMN url_template TEXT;
