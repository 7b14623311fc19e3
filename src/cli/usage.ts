/** Thrown for a malformed command line; the CLI exits 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** Flags every command accepts. */
export type GlobalOptions = { dataDir?: string; config?: string }
