-- Issue 17: an OTP (and the claim that holds one) is bound to the token's state when it was issued.
-- tokens.moves counts the moves of the token the gateway knows of: every relayed transfer it
-- accepted, and the moves it found on chain that it did not make (a user's pull with a transfer
-- signature). An OTP records the count at issue; once the token has moved, the OTP is refused
-- (409 token_moved). NULL on an OTP: it targets no token (a proof or guestbook event), or the chip
-- had no token when it was tapped.
ALTER TABLE tokens ADD COLUMN moves INTEGER NOT NULL DEFAULT 0;
-- The token's on-chain nonce minus the relayed transfers of ours that landed, at the last quiet
-- read (none of ours on its way): the moves made outside the gateway. NULL until the first read.
ALTER TABLE tokens ADD COLUMN outside_moves INTEGER;
ALTER TABLE otps ADD COLUMN token_moves INTEGER;
