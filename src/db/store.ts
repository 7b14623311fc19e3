import { createApiKeysRepository } from './apiKeys.js'
import { createChipGroupsRepository } from './chipGroups.js'
import { createChipsRepository } from './chips.js'
import { createClaimRegistrationsRepository } from './claimRegistrations.js'
import { createGuestbookRepository } from './guestbook.js'
import { openDatabase, type Db } from './openDatabase.js'
import { createOtpsRepository } from './otps.js'
import { createProofEventsRepository } from './proofEvents.js'
import { createRefsRepository } from './refs.js'
import { createTapLogRepository } from './tapLog.js'
import { createTeamsRepository } from './teams.js'
import { createTokensRepository } from './tokens.js'

/**
 * The data layer: every repository over one connection, plus `tx`, which runs
 * a read-modify-write under BEGIN IMMEDIATE so concurrent writers (another
 * request, the CLI, a second server process) queue instead of interleaving.
 *
 * @example
 * const store = openStore({ dataDir: './data' })
 * store.tx(() => store.refs.consume(id, Date.now()))
 */
export function createStore(db: Db) {
  const ping = db.prepare('SELECT 1')
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
    tx<T>(fn: () => T): T {
      return db.transaction(fn).immediate()
    },
    /** A round trip to the database, for health checks. */
    ping(): void {
      ping.get()
    },
    close() {
      if (db.open) db.close()
    },
  }
}

export type Store = ReturnType<typeof createStore>

export function openStore(params: { dataDir: string; busyTimeoutMs?: number }): Store {
  return createStore(openDatabase(params))
}
