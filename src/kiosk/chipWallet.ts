import type { Store } from '../db/store.js'
import { NotFoundError } from '../errors.js'

/**
 * Sets (or with null clears) the wallet of a team's chip: a check-in of the chip mints the
 * event's guestbook token to it (`chip set --wallet`; the import file's `wallet`).
 *
 * @throws NotFoundError chip_not_found (unknown, or another team's)
 */
export async function setChipWallet(store: Store, p: { uid: string; teamId: number; wallet: string | null }): Promise<void> {
  await store.tx(async (tx) => {
    const chip = await tx.chips.get(p.uid)
    if (!chip || chip.teamId !== p.teamId) throw new NotFoundError('chip_not_found', `No chip of team ${p.teamId} has UID ${p.uid}`)
    await tx.chips.setWallet(p.uid, p.wallet)
  })
}
