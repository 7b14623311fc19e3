import type { Db } from './sqlite/openDatabase.js'

export const keySchemes = ['static', 'per_chip', 'an10922', 'sdm_backend', 'boltcard'] as const
export type KeyScheme = (typeof keySchemes)[number]

export type ChipProfileRow = {
  id: number
  teamId: number
  name: string
  mode: 'aes' | 'lrp'
  layout: string | null
  /** The tap URL the profile's chips are provisioned with ({picc} {mac} …); null: none stored. */
  urlTemplate: string | null
  keyScheme: KeyScheme
  metaKey: Buffer | null
  fileKey: Buffer | null
  masterKey: Buffer | null
  createdAt: number
  updatedAt: number
}

export type ChipProfileWrite = Omit<ChipProfileRow, 'id' | 'createdAt' | 'updatedAt'> & { now: number }

const columns = `id, team_id AS teamId, name, mode, layout, url_template AS urlTemplate, key_scheme AS keyScheme, meta_key AS metaKey,
  file_key AS fileKey, master_key AS masterKey, created_at AS createdAt, updated_at AS updatedAt`

export function createChipProfilesRepository(db: Db) {
  const upsert = db.prepare<ChipProfileWrite, { id: number }>(
    `INSERT INTO chip_profiles (team_id, name, mode, layout, url_template, key_scheme, meta_key, file_key, master_key, created_at, updated_at)
     VALUES (@teamId, @name, @mode, @layout, @urlTemplate, @keyScheme, @metaKey, @fileKey, @masterKey, @now, @now)
     ON CONFLICT (team_id, name) DO UPDATE SET mode = excluded.mode, layout = excluded.layout, url_template = excluded.url_template,
       key_scheme = excluded.key_scheme, meta_key = excluded.meta_key, file_key = excluded.file_key,
       master_key = excluded.master_key, updated_at = excluded.updated_at
     RETURNING id`,
  )
  const byId = db.prepare<[number], ChipProfileRow>(`SELECT ${columns} FROM chip_profiles WHERE id = ?`)
  const byName = db.prepare<[number, string], ChipProfileRow>(`SELECT ${columns} FROM chip_profiles WHERE team_id = ? AND name = ?`)
  const all = db.prepare<[], ChipProfileRow>(`SELECT ${columns} FROM chip_profiles ORDER BY id`)
  const byTeam = db.prepare<[number], ChipProfileRow>(`SELECT ${columns} FROM chip_profiles WHERE team_id = ? ORDER BY id`)
  // A cheap fingerprint of every profile, so a long-running process notices edits made by the CLI.
  const version = db.prepare<[], { v: string | null }>(`SELECT group_concat(id || ':' || updated_at) AS v FROM chip_profiles`)
  return {
    upsert: (p: ChipProfileWrite) => upsert.get(p)!.id,
    get: (id: number) => byId.get(id),
    getByName: (teamId: number, name: string) => byName.get(teamId, name),
    list: () => all.all(),
    listByTeam: (teamId: number) => byTeam.all(teamId),
    version: () => version.get()!.v ?? '',
  }
}
