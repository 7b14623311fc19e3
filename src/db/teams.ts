import type { Db } from './sqlite/openDatabase.js'

export type TeamRow = { id: number; name: string; redirectUrl: string | null; createdAt: number }

const columns = 'id, name, redirect_url AS redirectUrl, created_at AS createdAt'

export function createTeamsRepository(db: Db) {
  const insert = db.prepare<[string, string | null, number]>(
    'INSERT INTO teams (name, redirect_url, created_at) VALUES (?, ?, ?)',
  )
  const byId = db.prepare<[number], TeamRow>(`SELECT ${columns} FROM teams WHERE id = ?`)
  const byName = db.prepare<[string], TeamRow>(`SELECT ${columns} FROM teams WHERE name = ?`)
  const all = db.prepare<[], TeamRow>(`SELECT ${columns} FROM teams ORDER BY id`)
  const setRedirect = db.prepare<[string | null, number]>('UPDATE teams SET redirect_url = ? WHERE id = ?')
  return {
    insert: (t: { name: string; redirectUrl: string | null; now: number }) =>
      Number(insert.run(t.name, t.redirectUrl, t.now).lastInsertRowid),
    get: (id: number) => byId.get(id),
    getByName: (name: string) => byName.get(name),
    list: () => all.all(),
    setRedirectUrl: (id: number, url: string | null) => setRedirect.run(url, id),
  }
}
