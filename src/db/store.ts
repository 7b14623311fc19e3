import { createApiKeysRepository } from './apiKeys.js'
import { createChainTxsRepository } from './chainTxs.js'
import { createChipGroupsRepository } from './chipGroups.js'
import { createChipProfilesRepository } from './chipProfiles.js'
import { createChipsRepository } from './chips.js'
import { createClaimRegistrationsRepository } from './claimRegistrations.js'
import { createClaimsRepository } from './claims.js'
import { createGatewayMetaRepository } from './gatewayMeta.js'
import { createGroupCommit } from './groupCommit.js'
import { createGuestbookRepository } from './guestbook.js'
import { openDatabase, type Db } from './openDatabase.js'
import { createOtpsRepository } from './otps.js'
import { createPhygitalContractsRepository } from './phygitalContracts.js'
import { createProofEventsRepository } from './proofEvents.js'
import { createProvisioningRepository } from './provisioning.js'
import { createRefsRepository } from './refs.js'
import { createRelayerLeasesRepository } from './relayerLeases.js'
import { createSealedKeysRepository } from './sealedKeys.js'
import { createStationEventsRepository } from './stationEvents.js'
import { createCheckInsRepository } from './checkIns.js'
import { createKioskTokensRepository } from './kioskTokens.js'
import { createMediaRepository } from './media.js'
import { createStaffAuthRepository } from './staffAuth.js'
import { createStationsRepository } from './stations.js'
import { createTapLogRepository } from './tapLog.js'
import { createTeamsRepository } from './teams.js'
import { createTokensRepository } from './tokens.js'
import { createTransfersRepository } from './transfers.js'
import { createUsedSignaturesRepository } from './usedSignatures.js'
import { startWalCheckpointer, type WalCheckpointer } from './walCheckpointer.js'

/**
 * The data layer: every repository over one connection, plus `tx`, which runs
 * a read-modify-write under BEGIN IMMEDIATE so concurrent writers (another
 * request, the CLI, a second server process) queue instead of interleaving.
 *
 * @example
 * const store = openStore({ dataDir: './data' })
 * store.tx(() => store.refs.consume(id, Date.now()))
 */
export function createStore(db: Db, checkpointer: WalCheckpointer | null = null) {
  const ping = db.prepare('SELECT 1')
  // Built once: db.transaction() wraps a function in four fresh closures on every call,
  // which cost ~6 µs per transaction (half of an empty BEGIN IMMEDIATE/COMMIT).
  const immediate = db.transaction((fn: () => unknown) => fn()).immediate
  const batch = createGroupCommit(db)
  return {
    db,
    teams: createTeamsRepository(db),
    apiKeys: createApiKeysRepository(db),
    chipGroups: createChipGroupsRepository(db),
    chips: createChipsRepository(db),
    tokens: createTokensRepository(db),
    proofEvents: createProofEventsRepository(db),
    guestbook: createGuestbookRepository(db),
    refs: createRefsRepository(db),
    otps: createOtpsRepository(db),
    claimRegistrations: createClaimRegistrationsRepository(db),
    tapLog: createTapLogRepository(db),
    chipProfiles: createChipProfilesRepository(db),
    stations: createStationsRepository(db),
    stationEvents: createStationEventsRepository(db),
    checkIns: createCheckInsRepository(db),
    claims: createClaimsRepository(db),
    kioskTokens: createKioskTokensRepository(db),
    media: createMediaRepository(db),
    staffAuth: createStaffAuthRepository(db),
    chainTxs: createChainTxsRepository(db),
    relayerLeases: createRelayerLeasesRepository(db),
    phygitalContracts: createPhygitalContractsRepository(db),
    transfers: createTransfersRepository(db),
    usedSignatures: createUsedSignaturesRepository(db),
    gatewayMeta: createGatewayMetaRepository(db),
    sealedKeys: createSealedKeysRepository(db),
    provisioning: createProvisioningRepository(db),
    tx<T>(fn: () => T): T {
      return immediate(fn) as T
    },
    /** Like `tx`, but shares one commit with the other jobs of this event-loop turn (see groupCommit.ts). */
    batch<T>(fn: () => T): Promise<T> {
      return batch(fn)
    },
    /** A round trip to the database, for health checks. */
    ping(): void {
      ping.get()
    },
    /** The worker that checkpoints the WAL, when this store has one (the server's). */
    checkpointer,
    close() {
      checkpointer?.stop()
      if (db.open) db.close()
    },
  }
}

export type Store = ReturnType<typeof createStore>

export type OpenStoreParameters = {
  dataDir: string
  busyTimeoutMs?: number
  /** The long-running server: checkpoint the WAL from a worker thread, not inside commits (see walCheckpointer.ts). */
  backgroundCheckpoints?: boolean
  log?: { warn(obj: object, msg?: string): void }
}

export function openStore({ backgroundCheckpoints = false, log, ...params }: OpenStoreParameters): Store {
  const db = openDatabase(params)
  const checkpointer = backgroundCheckpoints ? startWalCheckpointer(db, { log }) : null
  try {
    return createStore(db, checkpointer)
  } catch (error) {
    // A statement that does not prepare (a data dir from a newer tapgate): the worker would keep the process alive.
    checkpointer?.stop()
    db.close()
    throw error
  }
}
