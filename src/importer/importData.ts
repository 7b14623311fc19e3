import { type ChainSigner, loadChainSigners } from '../chain/chainKeys.js'
import type { Config } from '../config.js'
import type { Store } from '../db/store.js'
import { BaseError, ValidationError } from '../errors.js'
import { queueGuestbookDeploy } from '../guestbook/guestbookChain.js'
import { queuePhygitalDeploy } from '../phygitals/deployPhygitalContract.js'
import { ImportFile, type ImportFileT } from '../schemas/importFile.js'
import { assertSecretOpensStoredKeys, setChipVerification, upsertChipProfile } from '../taps/chipProfiles.js'
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
export function importData(store: Store, data: ImportFileT, { config, now, secret, signers = loadChainSigners(config) }: ImportDataOptions): ImportSummary {
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

  store.tx((tx) => {
    // Sealing new keys under a secret the stored ones do not open under would split them across two secrets.
    const sealsKeys = data.teams.some((t) => (t.chipProfiles?.length ?? 0) > 0 || t.chips.some((c) => c.fileKey !== undefined))
    if (sealsKeys)
      assertSecretOpensStoredKeys(store, secret, {
        except: (p) => data.teams.some((t) => t.name === store.teams.get(p.teamId)?.name && t.chipProfiles?.some((cp) => cp.name === p.name)),
      })

    data.teams.forEach((t, ti) => {
      const at = `teams.${ti}`
      const existing = store.teams.getByName(t.name)
      const teamId = existing?.id ?? store.teams.insert({ name: t.name, redirectUrl: t.redirectUrl ?? null, now })
      if (existing && t.redirectUrl !== undefined) store.teams.setRedirectUrl(teamId, t.redirectUrl)
      summary.teams.push({ id: teamId, name: t.name, created: !existing })

      const groupId = (name: string) =>
        store.chipGroups.getByName(teamId, name)?.id ?? store.chipGroups.insert({ teamId, name, now })
      for (const g of t.chipGroups) groupId(g.name)

      t.chipProfiles?.forEach((p, pi) => {
        try {
          upsertChipProfile(store, secret, { teamId, ...p, now })
        } catch (error) {
          throw failAt(`${at}.chipProfiles.${pi}`, error)
        }
        summary.chipProfiles++
      })

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
        if (c.counterMirror !== undefined) {
          // An NTAG 424 DNA's counter is inside its MAC-protected message: there is nothing to declare.
          if (c.kind !== 'ntag21x' && c.counterMirror !== null)
            throw fail(`${at}.chips.${ci}.counterMirror`, `Chip ${c.uid} is an NTAG 424 DNA: counterMirror is for NTAG 21x chips only`)
          store.chips.setCounterMirror(c.uid, c.counterMirror)
        }
        if (c.wallet !== undefined) store.chips.setWallet(c.uid, c.wallet)
        if (c.profile !== undefined || c.fileKey !== undefined || c.randomUid !== undefined || c.keyVersion !== undefined) {
          const storedProfile = chip?.profileId ? store.chipProfiles.get(chip.profileId)?.name : undefined
          try {
            setChipVerification(store, secret, {
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
      })

      const ownChip = (uid: string, path: string) => {
        if (store.chips.get(uid)?.teamId !== teamId)
          throw fail(path, `Chip ${uid} is not one of this team's chips; list it under ${at}.chips`)
        return uid
      }

      t.phygitalContracts.forEach((c, pi) => {
        const path = `${at}.phygitalContracts.${pi}`
        const byName = store.phygitalContracts.findByName(teamId, c.name, c.chainId)
        if (byName) {
          if (c.address !== undefined && c.address !== byName.address)
            throw fail(`${path}.address`, `Contract ${JSON.stringify(c.name)} is already at ${byName.address}`)
        } else if (c.address !== undefined) {
          const byAddress = store.phygitalContracts.findByAddress(c.chainId, c.address)
          if (byAddress) throw fail(`${path}.address`, `Contract ${c.address} is already registered as ${JSON.stringify(byAddress.name)}`)
          store.phygitalContracts.insert({ teamId, name: c.name, symbol: c.symbol, chainId: c.chainId, address: c.address, deployTxId: null, createdAt: now })
        } else {
          queuePhygitalDeploy(tx, signerFor(c.chainId, path), config, { teamId, name: c.name, symbol: c.symbol, now })
          summary.deploys++
        }
        summary.phygitalContracts++
      })

      t.tokens.forEach((tok, ki) => {
        const named = tok.contract === undefined ? undefined : store.phygitalContracts.findByName(teamId, tok.contract, tok.chainId)
        if (tok.contract !== undefined && !named)
          throw fail(`${at}.tokens.${ki}.contract`, `No phygital contract ${JSON.stringify(tok.contract)} on chain ${tok.chainId}; list it under ${at}.phygitalContracts`)
        const contractAddress: string = named?.address ?? tok.contractAddress!
        const key = { chainId: tok.chainId, contractAddress, tokenId: tok.tokenId }
        const existingToken = store.tokens.findByKey(key)
        if (existingToken && existingToken.teamId !== teamId)
          throw fail(`${at}.tokens.${ki}`, `Token ${tok.tokenId} of ${contractAddress} belongs to another team`)
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
        const insert = () => {
          if (c.address !== undefined)
            return store.guestbook.insertContract({ teamId, name: c.name, symbol: c.symbol, chainId: c.chainId, address: c.address, now })
          summary.deploys++
          const signer = signerFor(c.chainId, `${at}.guestbookContracts.${gi}`)
          return queueGuestbookDeploy(tx, signer, config, { teamId, name: c.name, symbol: c.symbol, now }).contractId
        }
        const contractId = found?.id ?? insert()
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
