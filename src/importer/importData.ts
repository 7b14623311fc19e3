import { type ChainSigner, loadChainSigners } from '../chain/chainKeys.js'
import type { Config } from '../config.js'
import type { Store, Tx } from '../db/store.js'
import type { TokenRow } from '../db/tokens.js'
import { BaseError, ValidationError } from '../errors.js'
import { queueGuestbookDeploy } from '../guestbook/guestbookChain.js'
import { queuePhygitalDeploy } from '../phygitals/deployPhygitalContract.js'
import { ImportFile, type ImportFileT } from '../schemas/importFile.js'
import { assertSecretOpensStoredKeys, setChipVerification, upsertChipProfile } from '../profiles/chipProfiles.js'
import { issuesToErrors } from '../validation/issuesToErrors.js'

export type ImportSummary = {
  teams: { id: number; name: string; created: boolean }[]
  /** Chip profiles created or updated (their keys are never part of the summary). */
  chipProfiles: number
  chips: number
  phygitalContracts: number
  /** Deploy transactions queued for the relayer (contracts listed without an address). */
  deploys: number
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

export type ImportDataOptions = {
  config: Config
  now: number
  /** The gateway secret (loadGatewaySecret): chip keys are sealed under it before they are stored. */
  secret: Buffer
  /** Keys of the chains contracts can be deployed on; default: loadChainSigners(config). */
  signers?: Map<number, ChainSigner>
}

/**
 * Imports teams and everything they own in one transaction: all of it or
 * nothing. Rows are matched by natural key (team name, chip profile name
 * within its team, chip UID, token key, proof event id, contract address or
 * name, event token id), so re-importing an edited file updates in place. A
 * chip or token owned by another team is an error, never a silent move. Chip
 * keys are sealed under `secret`; no error or summary repeats one.
 *
 * @throws ValidationError naming the path, e.g. `teams.0.chipProfiles.0.metaKey`
 * @throws SealedKeyError when the keys already stored do not open under `secret` (the CLI run with another secret than the server)
 * @example
 * importData(store, parseImportFile(JSON.parse(text)), { config, now: Date.now(), secret })
 */
export function importData(store: Store, data: ImportFileT, options: ImportDataOptions): Promise<ImportSummary> {
  return store.tx((tx) => importInto(tx, data, options))
}

/** {@link importData} inside the caller's transaction (the demo's first start: the emptiness check and the import in one). */
export async function importInto(tx: Tx, data: ImportFileT, { config, now, secret, signers = loadChainSigners(config) }: ImportDataOptions): Promise<ImportSummary> {
  const summary: ImportSummary = {
    teams: [],
    chipProfiles: 0,
    chips: 0,
    phygitalContracts: 0,
    deploys: 0,
    tokens: 0,
    proofEvents: 0,
    guestbookContracts: 0,
    guestbookEvents: 0,
  }
  const signerFor = (chainId: number, path: string) => {
    const signer = signers.get(chainId)
    if (!signer) throw fail(path, `Chain ${chainId} is not configured on this gateway, so the contract cannot be deployed; configure the chain or give the contract's address`)
    return signer
  }
  const errors: Record<string, string> = {}
  const fail = (path: string, message: string) => {
    errors[path] = message
    return new ValidationError('The import file conflicts with stored data', errors)
  }
  /** A domain error about one entry, re-thrown with its fields under the entry's path. */
  const failAt = (path: string, error: unknown) => {
    if (error instanceof ValidationError) {
      for (const [name, message] of Object.entries(error.errors ?? {})) errors[`${path}.${name}`] = message
      return new ValidationError('The import file conflicts with stored data', errors)
    }
    if (error instanceof BaseError && error.code === 'profile_not_found') return fail(`${path}.profile`, error.message)
    return error
  }

  // Sealing new keys under a secret the stored ones do not open under would split them across two secrets.
  const sealsKeys = data.teams.some((t) => (t.chipProfiles?.length ?? 0) > 0 || t.chips.some((c) => c.fileKey !== undefined))
  if (sealsKeys) {
    const teamNames = new Map((await tx.teams.list()).map((team) => [team.id, team.name]))
    await assertSecretOpensStoredKeys(tx, secret, {
      except: (p) => data.teams.some((t) => t.name === teamNames.get(p.teamId) && t.chipProfiles?.some((cp) => cp.name === p.name)),
    })
  }

  for (const [ti, t] of data.teams.entries()) {
    const at = `teams.${ti}`
    const existing = await tx.teams.getByName(t.name)
    const teamId = existing?.id ?? (await tx.teams.insert({ name: t.name, redirectUrl: t.redirectUrl ?? null, now }))
    if (existing && t.redirectUrl !== undefined) await tx.teams.setRedirectUrl(teamId, t.redirectUrl)
    summary.teams.push({ id: teamId, name: t.name, created: !existing })

    const groupId = async (name: string) => (await tx.chipGroups.getByName(teamId, name))?.id ?? (await tx.chipGroups.insert({ teamId, name, now }))
    for (const g of t.chipGroups) await groupId(g.name)

    for (const [pi, p] of (t.chipProfiles ?? []).entries()) {
      try {
        await upsertChipProfile(tx, secret, { teamId, ...p, now })
      } catch (error) {
        throw failAt(`${at}.chipProfiles.${pi}`, error)
      }
      summary.chipProfiles++
    }

    for (const [ci, c] of t.chips.entries()) {
      const chip = await tx.chips.get(c.uid)
      if (chip && chip.teamId !== teamId) throw fail(`${at}.chips.${ci}.uid`, `Chip ${c.uid} belongs to another team`)
      // An omitted field keeps what is stored; only an explicit value (or null) changes it.
      const group = c.group === undefined ? undefined : await groupId(c.group)
      const kind = c.kind ?? chip?.kind ?? 'ntag424'
      if (chip)
        await tx.chips.update({
          uid: c.uid,
          kind,
          groupId: group ?? chip.groupId,
          redirectUrl: c.redirectUrl === undefined ? chip.redirectUrl : c.redirectUrl,
        })
      else await tx.chips.insert({ uid: c.uid, kind, groupId: group ?? null, teamId, redirectUrl: c.redirectUrl ?? null, now })
      if (c.counterMirror !== undefined) {
        // An NTAG 424 DNA's counter is inside its MAC-protected message: there is nothing to declare.
        if (kind !== 'ntag21x' && c.counterMirror !== null)
          throw fail(`${at}.chips.${ci}.counterMirror`, `Chip ${c.uid} is an NTAG 424 DNA: counterMirror is for NTAG 21x chips only`)
        await tx.chips.setCounterMirror(c.uid, c.counterMirror)
      }
      if (c.wallet !== undefined) await tx.chips.setWallet(c.uid, c.wallet)
      if (c.profile !== undefined || c.fileKey !== undefined || c.randomUid !== undefined || c.keyVersion !== undefined) {
        const storedProfile = chip?.profileId ? (await tx.chipProfiles.get(chip.profileId))?.name : undefined
        try {
          await setChipVerification(tx, secret, {
            uid: c.uid,
            teamId,
            profileName: c.profile !== undefined ? c.profile : (storedProfile ?? null),
            fileKey: c.fileKey,
            randomUid: c.randomUid,
            keyVersion: c.keyVersion,
          })
        } catch (error) {
          throw failAt(`${at}.chips.${ci}`, error)
        }
      }
      summary.chips++
    }

    const ownChip = async (uid: string, path: string) => {
      if ((await tx.chips.get(uid))?.teamId !== teamId) throw fail(path, `Chip ${uid} is not one of this team's chips; list it under ${at}.chips`)
      return uid
    }

    for (const [pi, c] of t.phygitalContracts.entries()) {
      const path = `${at}.phygitalContracts.${pi}`
      const byName = await tx.phygitalContracts.findByName(teamId, c.name, c.chainId)
      if (byName) {
        if (c.address !== undefined && c.address !== byName.address)
          throw fail(`${path}.address`, `Contract ${JSON.stringify(c.name)} is already at ${byName.address}`)
      } else if (c.address !== undefined) {
        const byAddress = await tx.phygitalContracts.findByAddress(c.chainId, c.address)
        if (byAddress) throw fail(`${path}.address`, `Contract ${c.address} is already registered as ${JSON.stringify(byAddress.name)}`)
        await tx.phygitalContracts.insert({ teamId, name: c.name, symbol: c.symbol, chainId: c.chainId, address: c.address, deployTxId: null, createdAt: now })
      } else {
        await queuePhygitalDeploy(tx, signerFor(c.chainId, path), config, { teamId, name: c.name, symbol: c.symbol, now })
        summary.deploys++
      }
      summary.phygitalContracts++
    }

    for (const [ki, tok] of t.tokens.entries()) {
      const named = tok.contract === undefined ? undefined : await tx.phygitalContracts.findByName(teamId, tok.contract, tok.chainId)
      if (tok.contract !== undefined && !named)
        throw fail(`${at}.tokens.${ki}.contract`, `No phygital contract ${JSON.stringify(tok.contract)} on chain ${tok.chainId}; list it under ${at}.phygitalContracts`)
      const contractAddress: string = named?.address ?? tok.contractAddress!
      const key = { chainId: tok.chainId, contractAddress, tokenId: tok.tokenId }
      const existingToken = await tx.tokens.findByKey(key)
      if (existingToken && existingToken.teamId !== teamId) throw fail(`${at}.tokens.${ki}`, `Token ${tok.tokenId} of ${contractAddress} belongs to another team`)
      const twoTap = tok.twoTapClaim ?? storedTwoTap(existingToken)
      const write = {
        ...key,
        teamId,
        metadata: tok.metadata ? JSON.stringify(tok.metadata) : (existingToken?.metadata ?? null),
        twoTapClaim: twoTap !== false,
        claimDelaySeconds: (typeof twoTap === 'object' ? twoTap.delaySeconds : undefined) ?? config.claim.delaySeconds,
        claimWindowSeconds: (typeof twoTap === 'object' ? twoTap.windowSeconds : undefined) ?? config.claim.windowSeconds,
        now,
      }
      let tokenRowId: number
      if (existingToken) {
        await tx.tokens.update(existingToken.id, write)
        tokenRowId = existingToken.id
      } else tokenRowId = await tx.tokens.insert(write)
      for (const [i, uid] of tok.chips.entries()) await tx.tokens.linkChip(tokenRowId, await ownChip(uid, `${at}.tokens.${ki}.chips.${i}`), now)
      summary.tokens++
    }

    for (const [ei, e] of t.proofEvents.entries()) {
      const id = await tx.proofEvents.upsert({ teamId, proofEventId: e.proofEventId, name: e.name, status: e.status, now })
      for (const [i, uid] of e.chips.entries()) await tx.proofEvents.linkChip(id, await ownChip(uid, `${at}.proofEvents.${ei}.chips.${i}`))
      summary.proofEvents++
    }

    for (const [gi, c] of t.guestbookContracts.entries()) {
      const byAddress = c.address === undefined ? undefined : await tx.guestbook.findContractByAddress(c.chainId, c.address)
      if (byAddress && byAddress.teamId !== teamId) throw fail(`${at}.guestbookContracts.${gi}.address`, `Contract ${c.address} belongs to another team`)
      const byName = byAddress ? undefined : await tx.guestbook.findContractByName(teamId, c.name, c.chainId)
      // A pending contract named again with an address is that contract, now deployed.
      if (byName && byName.address === null && c.address !== undefined) await tx.guestbook.confirmContract(byName.id, c.address)
      const found = byAddress ?? (byName && (byName.address === null || c.address === undefined) ? byName : undefined)
      const insert = async () => {
        if (c.address !== undefined) return tx.guestbook.insertContract({ teamId, name: c.name, symbol: c.symbol, chainId: c.chainId, address: c.address, now })
        summary.deploys++
        const signer = signerFor(c.chainId, `${at}.guestbookContracts.${gi}`)
        return (await queueGuestbookDeploy(tx, signer, config, { teamId, name: c.name, symbol: c.symbol, now })).contractId
      }
      const contractId = found?.id ?? (await insert())
      summary.guestbookContracts++
      for (const [ei, e] of c.events.entries()) {
        const metadata = JSON.stringify(e.metadata)
        const event = await tx.guestbook.findEventInContract(contractId, e.tokenId)
        let eventId: number
        if (event) {
          await tx.guestbook.updateEvent(event.id, { name: e.name, metadata, now })
          eventId = event.id
        } else eventId = await tx.guestbook.insertEvent({ teamId, contractId, name: e.name, tokenId: e.tokenId, metadata, now })
        for (const [i, uid] of e.chips.entries())
          await tx.guestbook.assignChip(eventId, await ownChip(uid, `${at}.guestbookContracts.${gi}.events.${ei}.chips.${i}`), now)
        summary.guestbookEvents++
      }
    }
  }
  return summary
}

/** A stored token's 2-tap claim as the file would give it (false for a new token). */
function storedTwoTap(token: TokenRow | undefined): false | { delaySeconds: number; windowSeconds: number } {
  return token?.twoTapClaim ? { delaySeconds: token.claimDelaySeconds, windowSeconds: token.claimWindowSeconds } : false
}
