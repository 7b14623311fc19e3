import fs from 'node:fs'
import path from 'node:path'
import { packageRoot } from '../paths.js'

const migrationsDir = path.join(packageRoot, 'src/db/migrations')

export type Migration = { version: number; name: string; sql: string }

/** Reads `migrations/NNN-name.sql`, ordered by their number. */
export function loadMigrations(dir: string = migrationsDir): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((file) => /^\d{3}-[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file,
      sql: fs.readFileSync(`${dir}/${file}`, 'utf8'),
    }))
}
