import type { Config } from '../config.js'
import type { Store } from '../db/store.js'
import { ValidationError } from '../errors.js'
import { ImportFile, type ImportFileT } from '../schemas/importFile.js'
import { issuesToErrors } from '../validation/issuesToErrors.js'

export type ImportSummary = {
  teams: { id: number; name: string; created: boolean }[]
  chips: number
  tokens: number
  proofEvents: number
  guestbookContracts: number
  guestbookEvents: number
}

/** Validates an import document; errors name the bad path, e.g. `teams.0.chips.2.uid`. */
export function parseImportFile(data: unknown): ImportFileT {
  const result = ImportFile.safeParse(data)
  if (!result.success) throw new ValidationError('The import file is not valid', issuesToErrors(result.error.issues))
  return result.data
}

/**
 * Imports teams and everything they own in one transaction: all of it or
 * nothing. Rows are matched by natural key (team name, chip UID, token key,
 * proof event id, contract address or name, event token id), so re-importing
 * an edited file updates in place. A chip or token owned by another team is
 * an error, never a silent move.
 *
 * @example
 * importData(store, parseImportFile(JSON.parse(text)), { config, now: Date.now() })
 */
export function importData(store: Store, data: ImportFileT, { config, now }: { config: Config; now: number }): ImportSummary {
  const summary: ImportSummary = { teams: [], chips: 0, tokens: 0, proofEvents: 0, guestbookContracts: 0, guestbookEvents: 0 }
  const errors: Record<string, string> = {}
  const fail = (path: string, message: string) => {
    errors[path] = message
    return new ValidationError('The import file conflicts with stored data', errors)
  }

  store.tx(() => {
    data.teams.forEach((t, ti) => {
      const at = `teams.${ti}`
      const existing = store.teams.getByName(t.name)
      const teamId = existing?.id ?? store.teams.insert({ name: t.name, redirectUrl: t.redirectUrl ?? null, now })
      if (existing && t.redirectUrl !== undefined) store.teams.setRedirectUrl(teamId, t.redirectUrl)
      summary.teams.push({ id: teamId, name: t.name, created: !existing })

      const groupId = (name: string) =>
        store.chipGroups.getByName(teamId, name)?.id ?? store.chipGroups.insert({ teamId, name, now })
      for (const g of t.chipGroups) groupId(g.name)

      t.chips.forEach((c, ci) => {
        const chip = store.chips.get(c.uid)
        if (chip && chip.teamId !== teamId) throw fail(`${at}.chips.${ci}.uid`, `Chip ${c.uid} belongs to another team`)
        // An omitted field keeps what is stored; only an explicit value (or null) changes it.
        const group = c.group === undefined ? undefined : groupId(c.group)
        if (chip)
          store.chips.update({
            uid: c.uid,
            kind: c.kind,
            groupId: group ?? chip.groupId,
            redirectUrl: c.redirectUrl === undefined ? chip.redirectUrl : c.redirectUrl,
          })
        else store.chips.insert({ uid: c.uid, kind: c.kind, groupId: group ?? null, teamId, redirectUrl: c.redirectUrl ?? null, now })
        summary.chips++
      })

      const ownChip = (uid: string, path: string) => {
        if (store.chips.get(uid)?.teamId !== teamId)
          throw fail(path, `Chip ${uid} is not one of this team's chips; list it under ${at}.chips`)
        return uid
      }

      t.tokens.forEach((tok, ki) => {
        const key = { chainId: tok.chainId, contractAddress: tok.contractAddress, tokenId: tok.tokenId }
        const existingToken = store.tokens.findByKey(key)
        if (existingToken && existingToken.teamId !== teamId)
          throw fail(`${at}.tokens.${ki}`, `Token ${tok.tokenId} of ${tok.contractAddress} belongs to another team`)
        const twoTap = tok.twoTapClaim
        const write = {
          ...key,
          teamId,
          metadata: tok.metadata ? JSON.stringify(tok.metadata) : (existingToken?.metadata ?? null),
          twoTapClaim: twoTap !== false,
          claimDelaySeconds: (typeof twoTap === 'object' ? twoTap.delaySeconds : undefined) ?? config.claim.delaySeconds,
          claimWindowSeconds: (typeof twoTap === 'object' ? twoTap.windowSeconds : undefined) ?? config.claim.windowSeconds,
          now,
        }
        const tokenRowId = existingToken ? (store.tokens.update(existingToken.id, write), existingToken.id) : store.tokens.insert(write)
        tok.chips.forEach((uid, i) => store.tokens.linkChip(tokenRowId, ownChip(uid, `${at}.tokens.${ki}.chips.${i}`), now))
        summary.tokens++
      })

      t.proofEvents.forEach((e, ei) => {
        const id = store.proofEvents.upsert({ teamId, proofEventId: e.proofEventId, name: e.name, status: e.status, now })
        e.chips.forEach((uid, i) => store.proofEvents.linkChip(id, ownChip(uid, `${at}.proofEvents.${ei}.chips.${i}`)))
        summary.proofEvents++
      })

      t.guestbookContracts.forEach((c, gi) => {
        const byAddress = c.address === undefined ? undefined : store.guestbook.findContractByAddress(c.chainId, c.address)
        if (byAddress && byAddress.teamId !== teamId)
          throw fail(`${at}.guestbookContracts.${gi}.address`, `Contract ${c.address} belongs to another team`)
        const byName = byAddress ? undefined : store.guestbook.findContractByName(teamId, c.name, c.chainId)
        // A pending contract named again with an address is that contract, now deployed.
        if (byName && byName.address === null && c.address !== undefined) store.guestbook.confirmContract(byName.id, c.address)
        const found = byAddress ?? (byName && (byName.address === null || c.address === undefined) ? byName : undefined)
        const contractId =
          found?.id ??
          store.guestbook.insertContract({ teamId, name: c.name, symbol: c.symbol, chainId: c.chainId, address: c.address ?? null, now })
        summary.guestbookContracts++
        c.events.forEach((e, ei) => {
          const metadata = JSON.stringify(e.metadata)
          const event = store.guestbook.findEventInContract(contractId, e.tokenId)
          const eventId = event
            ? (store.guestbook.updateEvent(event.id, { name: e.name, metadata, now }), event.id)
            : store.guestbook.insertEvent({ teamId, contractId, name: e.name, tokenId: e.tokenId, metadata, now })
          e.chips.forEach((uid, i) =>
            store.guestbook.assignChip(eventId, ownChip(uid, `${at}.guestbookContracts.${gi}.events.${ei}.chips.${i}`), now),
          )
          summary.guestbookEvents++
        })
      })
    })
  })
  return summary
}
