-- Issue 24 §1: a relayed transfer that reverts is re-signed only when the revert is not explained by
-- a move the gateway did not make. The transfer records the token's moves made outside the gateway
-- (tokens.outside_moves) that were known when it was accepted; the relayer compares the chain's
-- count with it, never with tokens.outside_moves at the time of the revert, which a read made
-- after the revert may already have raised (0 when no read had counted any). NULL: accepted before
-- this migration; the token's count stands in.
ALTER TABLE transfers ADD COLUMN known_outside_moves INTEGER;
