import type { ChipGroupRow, createChipGroupsRepository } from '../chipGroups.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

const columns = 'id, team_id, name, created_at'

export function createPgChipGroupsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createChipGroupsRepository>> {
  return {
    async insert(g) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO chip_groups (team_id, name, created_at) VALUES (${g.teamId}, ${g.name}, ${g.now}) RETURNING id`
      return row!.id
    },
    async getByName(teamId, name) {
      const [row] = await sql<ChipGroupRow[]>`SELECT ${sql.unsafe(columns)} FROM chip_groups WHERE team_id = ${teamId} AND name = ${name}`
      return row
    },
    async listByTeam(teamId) {
      return [...(await sql<ChipGroupRow[]>`SELECT ${sql.unsafe(columns)} FROM chip_groups WHERE team_id = ${teamId} ORDER BY id`)]
    },
  }
}
