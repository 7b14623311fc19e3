import fs from 'node:fs'
import path from 'node:path'
import type { Store, Repositories } from '../db/store.js'
import { GatewaySecretError } from '../keys/errors.js'
import { loadGatewaySecret, SECRET_FILE } from '../keys/gatewaySecret.js'
import { openKey, sealKey } from '../keys/sealKey.js'
import { unopenableProfiles } from './chipProfiles.js'

// The check value is a sealed key like the chip keys (same secret, same AES-GCM), of a fixed
// label: "opens" means exactly "the chip keys would open", and it reveals nothing about the secret.
const LABEL = Buffer.from('tapgate secret check')
const CONTEXT = 'gateway:secret-check'

export type GatewaySecretSource = { dataDir: string; secretHex?: string }

/** Where the secret comes from, for messages: never the secret itself. */
export const secretSourceName = ({ dataDir, secretHex }: GatewaySecretSource): string =>
  secretHex !== undefined ? 'TAPGATE_SECRET or the config secret' : path.join(dataDir, SECRET_FILE)

/**
 * loadGatewaySecret, except that it never creates secret.key while sealed chip
 * keys exist: a fresh secret would open none of them, and taps would fail long
 * after the cause (a deleted or unrestored file) is forgotten.
 *
 * @throws GatewaySecretError (missing)
 * @example
 * const secret = openGatewaySecret(store, { dataDir: config.dataDir, secretHex: config.secret })
 */
export async function openGatewaySecret(store: Repositories, source: GatewaySecretSource): Promise<Buffer> {
  const file = path.join(source.dataDir, SECRET_FILE)
  if (source.secretHex === undefined && !fs.existsSync(file)) {
    const sealed = await store.sealedKeys.count()
    if (sealed > 0) throw new GatewaySecretError('missing', { where: file, sealed })
  }
  return loadGatewaySecret(source)
}

/**
 * The start-up check: the secret must open the stored check value whenever
 * sealed chip keys exist. Without keys there is nothing to lose, and the check
 * value follows the secret. A data dir from before the check (keys, no check
 * value) gets one when its profile keys open under this secret.
 *
 * @throws GatewaySecretError (mismatch)
 */
export async function checkGatewaySecret(store: Store, secret: Buffer, source: GatewaySecretSource): Promise<void> {
  await store.tx(async (tx) => {
    const stored = await tx.gatewayMeta.get('secret_check')
    if (stored !== undefined && opens(secret, stored)) return
    const sealed = await tx.sealedKeys.count()
    if (sealed > 0 && (stored !== undefined || (await unopenableProfiles(tx, secret)).length > 0))
      throw new GatewaySecretError('mismatch', { where: secretSourceName(source), sealed })
    await tx.gatewayMeta.set('secret_check', sealKey(secret, LABEL, CONTEXT))
  })
}

/**
 * After the CLI sealed keys: when every profile's keys open under `secret`, the
 * check value becomes this secret's. This is how re-registering every key under
 * a new secret (a lost secret) lets the server start with it.
 */
export async function recordGatewaySecret(store: Store, secret: Buffer): Promise<void> {
  await store.tx(async (tx) => {
    const stored = await tx.gatewayMeta.get('secret_check')
    if (stored !== undefined && opens(secret, stored)) return
    if ((await unopenableProfiles(tx, secret)).length === 0) await tx.gatewayMeta.set('secret_check', sealKey(secret, LABEL, CONTEXT))
  })
}

function opens(secret: Buffer, blob: Buffer): boolean {
  try {
    return openKey(secret, blob, CONTEXT).equals(LABEL)
  } catch {
    return false
  }
}
