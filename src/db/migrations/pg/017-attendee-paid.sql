-- Unpaid guests and the not_paid refusal: see ../017-attendee-paid.sql.
ALTER TABLE attendees ADD COLUMN paid boolean NOT NULL DEFAULT true;
ALTER TABLE guestbook_events ADD COLUMN admit_unpaid boolean NOT NULL DEFAULT false;
ALTER TABLE door_refusals DROP CONSTRAINT door_refusals_reason_check;
ALTER TABLE door_refusals ADD CONSTRAINT door_refusals_reason_check CHECK (reason IN ('not_allowed', 'no_reentry', 'not_on_list', 'not_paid'));
