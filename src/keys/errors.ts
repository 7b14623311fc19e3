import { BaseError } from '../errors.js'

export type SealedKeyErrorReason =
  /** The blob is not a sealed key at all: the database was altered. */
  | 'malformed'
  /** Authentication failed: another gateway secret, another row's blob, or altered bytes. */
  | 'does_not_open'
  /** Found before sealing new keys: the stored ones were sealed under another secret than this process has. */
  | 'other_secret'

const messages: Record<SealedKeyErrorReason, (context: string) => string> = {
  malformed: (context) => `A stored chip key (${context}) is malformed: the database was altered. Register the keys again (docs/keys.md).`,
  does_not_open: (context) =>
    `A stored chip key (${context}) does not open under this gateway secret: it was sealed under another one ` +
    '(secret.key replaced, or TAPGATE_SECRET / the config secret changed), or the database was altered. ' +
    'Restore that secret, or register the keys again (docs/keys.md).',
  other_secret: (context) =>
    `The chip keys already stored (${context}) do not open under this gateway secret, so keys sealed now would not open ` +
    "for the server either. Run with the server's secret (TAPGATE_SECRET, the config secret, or secret.key in the data dir); " +
    'if that secret is lost, import every profile with its keys in one file (docs/keys.md).',
}

/**
 * Thrown when a sealed chip key does not open: it was sealed under another
 * gateway secret (secret.key replaced or deleted, TAPGATE_SECRET or the config
 * `secret` changed, the CLI run with another secret than the server), or the
 * stored blob was altered or copied from another row. 503: the gateway cannot
 * verify taps until the operator restores the secret or registers the keys
 * again (docs/keys.md). The message names neither a key nor the secret.
 */
export class SealedKeyError extends BaseError {
  override name = 'SealedKeyError'
  /** Which sealed key failed, e.g. `profile:3:meta`. */
  readonly context: string
  readonly reason: SealedKeyErrorReason

  constructor(context: string, reason: SealedKeyErrorReason) {
    super(503, 'chip_keys_unavailable', messages[reason](context))
    this.context = context
    this.reason = reason
  }
}
