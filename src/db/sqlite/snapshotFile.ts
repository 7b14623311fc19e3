import type { Db } from './openDatabase.js'

/**
 * A copy of the whole database in `file` (VACUUM INTO: one consistent read, a few ms for a test's
 * data), for restoreSnapshotFile. tapgate/testing's snapshot() and reset() stand on these two.
 */
export function writeSnapshotFile(db: Db, file: string): void {
  db.prepare('VACUUM INTO ?').run(file)
}

/**
 * Puts every table of the open database back to what `file` (writeSnapshotFile) holds, in one
 * transaction, AUTOINCREMENT counters included: the ids a test sees after a restore are the ones it
 * saw after the snapshot. The connection stays open, so its prepared statements stay valid; that is
 * why this copies rows rather than swapping the file under it. Foreign keys are off meanwhile: the
 * tables are filled in name order, not in the order their references need.
 */
export function restoreSnapshotFile(db: Db, file: string): void {
  const tables = db
    .prepare<[], { name: string }>("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all()
    .map((row) => row.name)
  const hasSequence = db.prepare("SELECT 1 FROM main.sqlite_master WHERE name = 'sqlite_sequence'").get() !== undefined
  db.pragma('foreign_keys = OFF')
  db.prepare('ATTACH DATABASE ? AS snapshot').run(file)
  try {
    db.transaction(() => {
      for (const table of tables) {
        const quoted = `"${table.replaceAll('"', '""')}"`
        db.exec(`DELETE FROM main.${quoted}; INSERT INTO main.${quoted} SELECT * FROM snapshot.${quoted}`)
      }
      if (hasSequence) db.exec('DELETE FROM main.sqlite_sequence; INSERT INTO main.sqlite_sequence SELECT * FROM snapshot.sqlite_sequence')
    })()
  } finally {
    db.exec('DETACH DATABASE snapshot')
    db.pragma('foreign_keys = ON')
  }
}
