import type { Store } from '../db/store.js'
import { NotFoundError } from '../errors.js'

export type SetChipRedirectsParameters = { teamId: number; uids: string[]; redirectUrl: string | null }

/**
 * PATCH /chips: sets (or, with null, clears) the redirect URL a tap of each chip lands on, for the
 * team's own chips only, all or nothing: one transaction, and the first UID that is not the team's
 * refuses the whole request before anything is written. Another team's chip is refused as an unknown
 * one, so a key cannot learn which UIDs other teams hold. A UID listed twice is set once.
 *
 * @throws NotFoundError chip_not_found, naming the UID
 */
export async function setChipRedirects(store: Store, p: SetChipRedirectsParameters): Promise<{ uid: string; redirectUrl: string | null }[]> {
  const uids = [...new Set(p.uids)]
  return store.tx(async (tx) => {
    for (const uid of uids) {
      const chip = await tx.chips.get(uid)
      if (!chip || chip.teamId !== p.teamId) throw new NotFoundError('chip_not_found', `No chip with UID ${uid} is registered to this team; nothing was changed`)
    }
    for (const uid of uids) await tx.chips.setRedirectUrl(uid, p.redirectUrl)
    return uids.map((uid) => ({ uid, redirectUrl: p.redirectUrl }))
  })
}
