import type { Db } from './sqlite/openDatabase.js'

export type RefSource = 'operator' | 'phone' | 'station' | 'links'

export type RefRow = {
  id: string
  chipUid: string
  teamId: number
  source: RefSource
  authenticated: number
  linksModule: number
  counter: number | null
  createdAt: number
  consumedAt: number | null
}

const columns = `id, chip_uid AS chipUid, team_id AS teamId, source, authenticated, links_module AS linksModule,
  counter, created_at AS createdAt, consumed_at AS consumedAt`

export function createRefsRepository(db: Db) {
  const insert = db.prepare(
    `INSERT INTO refs (id, chip_uid, team_id, source, authenticated, links_module, counter, created_at)
     VALUES (@id, @chipUid, @teamId, @source, @authenticated, @linksModule, @counter, @now)`,
  )
  const byId = db.prepare<[string], RefRow>(`SELECT ${columns} FROM refs WHERE id = ?`)
  // The WHERE clause is what makes "exactly one first query" hold across processes.
  const consume = db.prepare<[number, string]>('UPDATE refs SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL')
  return {
    insert: (r: {
      id: string
      chipUid: string
      teamId: number
      source: RefSource
      authenticated: boolean
      linksModule: boolean
      counter: number | null
      now: number
    }) => insert.run({ ...r, authenticated: r.authenticated ? 1 : 0, linksModule: r.linksModule ? 1 : 0 }),
    get: (id: string) => byId.get(id),
    /** @returns true when this call consumed the ref, false when it was already consumed */
    consume: (id: string, now: number) => consume.run(now, id).changes === 1,
  }
}
