import type { createTeamsRepository, TeamRow } from '../teams.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

const columns = 'id, name, redirect_url, created_at'

export function createPgTeamsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createTeamsRepository>> {
  return {
    async insert(t) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO teams (name, redirect_url, created_at) VALUES (${t.name}, ${t.redirectUrl}, ${t.now}) RETURNING id`
      return row!.id
    },
    async get(id) {
      const [row] = await sql<TeamRow[]>`SELECT ${sql.unsafe(columns)} FROM teams WHERE id = ${id}`
      return row
    },
    async getByName(name) {
      const [row] = await sql<TeamRow[]>`SELECT ${sql.unsafe(columns)} FROM teams WHERE name = ${name}`
      return row
    },
    async list() {
      return [...(await sql<TeamRow[]>`SELECT ${sql.unsafe(columns)} FROM teams ORDER BY id`)]
    },
    async setRedirectUrl(id, url) {
      await sql`UPDATE teams SET redirect_url = ${url} WHERE id = ${id}`
    },
  }
}
