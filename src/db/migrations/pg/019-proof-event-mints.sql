-- A proof event's attendance token: see ../019-proof-event-mints.sql.
CREATE TABLE proof_event_contracts (
  team_id     bigint NOT NULL REFERENCES teams(id),
  chain_id    bigint NOT NULL,
  contract_id bigint NOT NULL UNIQUE REFERENCES guestbook_contracts(id),
  PRIMARY KEY (team_id, chain_id)
);
ALTER TABLE proof_events ADD COLUMN guestbook_event_id bigint REFERENCES guestbook_events(id);
