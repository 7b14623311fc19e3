/**
 * Why a secure-messaging exchange could not be trusted, as distinct from the
 * card refusing a command (NtagStatusError):
 *
 * - `response_mac`: the answer's MAC is not the card's: a wrong session, a
 *   CmdCtr out of step, or a tampered answer.
 * - `padding`: encrypted data does not decrypt to valid padding.
 * - `length`: the answer is shorter or longer than the command's answer can be.
 * - `mutual_auth`: authentication part 2 came back without proof that the card
 *   holds the key (RndA' is not RndA rotated, or the LRP PICCResponse is wrong).
 * - `mode`: the chip answered in the other secure-messaging mode (an AES
 *   challenge to AuthenticateLRPFirst: the chip is in AES mode).
 * - `session`: the session cannot send this command (it ended, a command is still
 *   waiting for its answer, or CmdCtr is exhausted).
 * - `sequence`: an exchange was used out of order (e.g. part 2 before part 1).
 */
export type SecureMessagingErrorKind = 'response_mac' | 'padding' | 'length' | 'mutual_auth' | 'mode' | 'session' | 'sequence'

/**
 * Thrown when an answer fails verification or a session is used wrongly. After
 * any of these the session is over: re-authenticate (one attempt, with the same
 * key; never try other keys). Messages never contain key material.
 *
 * @example
 * try { exchange.parse(response) } catch (e) { if (e instanceof SecureMessagingError && e.kind === 'response_mac') … }
 */
export class SecureMessagingError extends Error {
  override name = 'SecureMessagingError'
  readonly kind: SecureMessagingErrorKind

  constructor(kind: SecureMessagingErrorKind, message: string) {
    super(message)
    this.kind = kind
  }
}
