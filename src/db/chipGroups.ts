import type { Db } from './sqlite/openDatabase.js'

export type ChipGroupRow = { id: number; teamId: number; name: string; createdAt: number }

const columns = 'id, team_id AS teamId, name, created_at AS createdAt'

export function createChipGroupsRepository(db: Db) {
  const insert = db.prepare<[number, string, number]>(
    'INSERT INTO chip_groups (team_id, name, created_at) VALUES (?, ?, ?)',
  )
  const byName = db.prepare<[number, string], ChipGroupRow>(
    `SELECT ${columns} FROM chip_groups WHERE team_id = ? AND name = ?`,
  )
  const byTeam = db.prepare<[number], ChipGroupRow>(`SELECT ${columns} FROM chip_groups WHERE team_id = ? ORDER BY id`)
  return {
    insert: (g: { teamId: number; name: string; now: number }) =>
      Number(insert.run(g.teamId, g.name, g.now).lastInsertRowid),
    getByName: (teamId: number, name: string) => byName.get(teamId, name),
    listByTeam: (teamId: number) => byTeam.all(teamId),
  }
}
