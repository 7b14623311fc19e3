import type { ProvisioningRun } from '../../db/provisioning.js'
import type { Store, Repositories } from '../../db/store.js'
import { getCardUid } from '../getCardUid.js'
import type { CardLink } from './cardLink.js'
import { classifyChip, type ChipReading } from './inspectChip.js'
import { authenticateKey0, currentKey, openRunKeys, ProvisioningStopped } from './keySession.js'

/**
 * The UID of a chip that hides it (Random ID), learned without a key search:
 * the journal must name exactly one unfinished run whose key versions fit the
 * chip (or the run of `uid` when the operator named the chip); one
 * authentication with that run's key 0, then GetCardUID in CommMode.Full.
 *
 * @throws ProvisioningStopped (refused) when no single candidate fits, or the chip is another one
 */
export async function resolveRandomUid(store: Repositories, secret: Buffer, link: CardLink, reading: ChipReading, uid?: string): Promise<string> {
  const fits = (run: ProvisioningRun) => classifyChip({ ...reading, uid: run.uid }, run).kind !== 'foreign'
  const candidates = (uid === undefined ? (await store.provisioning.randomIdRuns()).filter((r) => r.state !== 'provisioned') : [await store.provisioning.latest(uid)].flatMap((r) => (r?.randomId ? [r] : []))).filter(fits)
  if (candidates.length !== 1)
    throw new ProvisioningStopped(
      'refused',
      candidates.length === 0
        ? 'the chip hides its UID (Random ID) and no run of this gateway fits its key versions: nothing was tried'
        : `the chip hides its UID (Random ID) and ${candidates.length} runs fit its key versions; name the chip (--uid) so only one key is tried`,
    )
  const run = candidates[0]!
  const session = await authenticateKey0(link, currentKey(0, reading.keyVersions[0], run, openRunKeys(secret, run)), run.mode)
  const real = (await link.run('GetCardUID', getCardUid(session))).toString('hex').toUpperCase()
  if (real !== run.uid) throw new ProvisioningStopped('refused', `the chip is ${real}, not ${run.uid}: nothing was written`)
  return real
}
