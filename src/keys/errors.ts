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

export type GatewaySecretErrorReason =
  /** No secret configured and secret.key gone, while sealed keys exist: a new secret would open none of them. */
  | 'missing'
  /** The secret does not match the check value stored with the sealed keys. */
  | 'mismatch'

const recovery =
  'If that secret is lost, register every key again under a new one (docs/keys.md, "When the secret changes, or is lost").'

/**
 * Thrown at start (and by the CLI's key commands) instead of going on with a
 * gateway secret that cannot open the sealed chip keys: before this check, a
 * deleted secret.key was silently replaced, and every tap then failed. `where`
 * names the secret's source (a file path, or TAPGATE_SECRET); never the secret.
 */
export class GatewaySecretError extends BaseError {
  override name = 'GatewaySecretError'
  readonly reason: GatewaySecretErrorReason

  constructor(reason: GatewaySecretErrorReason, { where, sealed }: { where: string; sealed: number }) {
    super(
      503,
      reason === 'missing' ? 'gateway_secret_missing' : 'gateway_secret_mismatch',
      reason === 'missing'
        ? `${where} is missing, but the database holds sealed chip keys (${sealed}) that only the gateway secret it held can open, ` +
            'so no new secret is made. Fix: restore secret.key from a backup (mode 0600), or set TAPGATE_SECRET (or the config secret) ' +
            `to the secret the keys were sealed under. ${recovery}`
        : `The gateway secret (${where}) is not the one the chip keys in the database were sealed under (${sealed} sealed): ` +
            'with it no tap could be verified, so the gateway does not start. Fix: run with that secret (restore secret.key from a backup, ' +
            `or set TAPGATE_SECRET to it). ${recovery}`,
    )
    this.reason = reason
  }
}
