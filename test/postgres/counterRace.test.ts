// Issue 18: two taps of one chip on PostgreSQL. A tap's batch is READ COMMITTED, so another tap may
// commit a higher counter between this tap's read of the chip and its conditional counter update;
// the update then refuses it (counter_replay), and the refusal must name the counter that won, not the
// one read before it. SQLite has one writer at a time: there the read and the update are never split.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { connectPostgres } from '../../src/db/pg/connect.js'
import { createPostgresStore, type PostgresStore } from '../../src/db/pg/store.js'
import { recordTapBatched } from '../../src/taps/recordTap.js'
import { TapRejectedError } from '../../src/taps/tapErrors.js'
import { HAS_POSTGRES, testDatabase } from '../helpers/postgres.js'
import { until } from '../helpers/until.js'

const UID = '04C0DE00000001'

describe.skipIf(!HAS_POSTGRES)('a tap whose counter another tap of the chip overtook', () => {
  const database = testDatabase()
  let store: PostgresStore
  beforeAll(() => {
    store = createPostgresStore(() => connectPostgres({ url: database.url(), max: 4 }))
  })
  afterAll(async () => store?.close())

  test('is a counter_replay that names the winner\'s counter', async () => {
    const teamId = await store.teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    await store.chips.insert({ uid: UID, teamId, groupId: null, kind: 'ntag424', redirectUrl: null, now: 1 })
    const other = database.connect()
    let tap: Promise<unknown> | undefined
    // The other tap: counter 2, not committed until this tap has read the chip (last counter null) and waits for its row.
    await other.begin(async (sql) => {
      await sql`UPDATE chips SET last_counter = 2 WHERE uid = ${UID}`
      tap = recordTapBatched(store, { uid: UID, source: 'station', authenticated: true, counter: 1, freshCounter: true, now: 2 }).catch((error: unknown) => error)
      const waiting = async () => (await other<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`)[0]!.n
      await until('the tap to wait for the chip row', async () => ((await waiting()) > 0 ? true : undefined))
    })
    const refused = await tap
    expect(refused).toBeInstanceOf(TapRejectedError)
    expect(refused).toMatchObject({ reason: 'counter_replay', detail: 'counter 1 is not above the last accepted counter 2' })
    expect((await store.chips.get(UID))!.lastCounter).toBe(2)
  })
})
