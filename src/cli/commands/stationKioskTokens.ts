import { BaseError } from '../../errors.js'
import { listKioskTokens, revokeKioskToken } from '../../kiosk/kioskTokens.js'
import { UsageError, type Flags } from '../usage.js'
import { printJson, text, withStore } from './context.js'

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/**
 * `station kiosk-tokens --station ID [--revoke PREFIX]`: a station's kiosk tokens (prefix,
 * created, last seen, revoked), or one of them revoked, so a lost tablet can be cut off without
 * `station revoke` stopping the whole station.
 */
export async function run(stationId: number, flags: Flags): Promise<void> {
  const revoke = text(flags, 'revoke')
  if (flags.revoke !== undefined && !revoke) throw new UsageError('--revoke takes a kiosk token prefix (as listed) or the whole token')
  await withStore(flags, async (store) => {
    if (revoke === undefined) {
      return printJson(
        (await listKioskTokens(store, { stationId })).map((k) => ({ prefix: k.prefix, createdAt: iso(k.createdAt), lastSeenAt: iso(k.lastSeenAt), revokedAt: iso(k.revokedAt) })),
      )
    }
    try {
      const revoked = await revokeKioskToken(store, { stationId, tokenOrPrefix: revoke, now: Date.now() })
      printJson({ stationId, prefix: revoked.prefix, revokedAt: iso(revoked.revokedAt) })
    } catch (error) {
      // More of the prefix is the fix: the command line's to correct, like any usage error.
      if (error instanceof BaseError && error.code === 'kiosk_token_prefix_ambiguous') throw new UsageError(`--revoke: ${error.message}`)
      throw error
    }
  })
}
