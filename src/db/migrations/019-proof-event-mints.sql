-- Issue 26: POST /poap-events/mint. A proof event's attendance token is an event of a guestbook that the
-- gateway deploys for the team's proof events (one per team and chain, made at the first mint): the
-- mint, its give-backs on a revert, pausing and metadata are the guestbook's own.
CREATE TABLE proof_event_contracts (
  team_id     INTEGER NOT NULL REFERENCES teams(id),
  chain_id    INTEGER NOT NULL,
  contract_id INTEGER NOT NULL UNIQUE REFERENCES guestbook_contracts(id),
  PRIMARY KEY (team_id, chain_id)
);
ALTER TABLE proof_events ADD COLUMN guestbook_event_id INTEGER REFERENCES guestbook_events(id);
