import type { ChipProfileRow, createChipProfilesRepository } from '../chipProfiles.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

const columns = 'id, team_id, name, mode, layout, url_template, key_scheme, meta_key, file_key, master_key, created_at, updated_at'

export function createPgChipProfilesRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createChipProfilesRepository>> {
  return {
    async upsert(p) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO chip_profiles
          (team_id, name, mode, layout, url_template, key_scheme, meta_key, file_key, master_key, created_at, updated_at)
        VALUES (${p.teamId}, ${p.name}, ${p.mode}, ${p.layout}, ${p.urlTemplate}, ${p.keyScheme}, ${p.metaKey}, ${p.fileKey}, ${p.masterKey}, ${p.now}, ${p.now})
        ON CONFLICT (team_id, name) DO UPDATE SET mode = excluded.mode, layout = excluded.layout, url_template = excluded.url_template,
          key_scheme = excluded.key_scheme, meta_key = excluded.meta_key, file_key = excluded.file_key,
          master_key = excluded.master_key, updated_at = excluded.updated_at
        RETURNING id`
      return row!.id
    },
    async get(id) {
      const [row] = await sql<ChipProfileRow[]>`SELECT ${sql.unsafe(columns)} FROM chip_profiles WHERE id = ${id}`
      return row
    },
    async getByName(teamId, name) {
      const [row] = await sql<ChipProfileRow[]>`SELECT ${sql.unsafe(columns)} FROM chip_profiles WHERE team_id = ${teamId} AND name = ${name}`
      return row
    },
    async list() {
      return [...(await sql<ChipProfileRow[]>`SELECT ${sql.unsafe(columns)} FROM chip_profiles ORDER BY id`)]
    },
    async listByTeam(teamId) {
      return [...(await sql<ChipProfileRow[]>`SELECT ${sql.unsafe(columns)} FROM chip_profiles WHERE team_id = ${teamId} ORDER BY id`)]
    },
    // The keyring's fingerprint of every profile, read on every tap: the same string as SQLite's
    // group_concat, which walks the table in id order ("1:5,2:7").
    async version() {
      const [row] = await sql<{ v: string | null }[]>`SELECT string_agg(id || ':' || updated_at, ',' ORDER BY id) AS v FROM chip_profiles`
      return row!.v ?? ''
    },
  }
}
