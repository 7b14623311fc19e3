/** Thrown for a malformed command line; the CLI exits 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** Parsed flags: strings as typed (never coerced to numbers), booleans for switches. */
export type Flags = Record<string, string | boolean | undefined>

/** Flags every command accepts. */
export type GlobalOptions = { 'data-dir'?: string; config?: string }

/** What a command module exports; `run` receives its positionals and flags. */
export type CommandModule = { run: (positionals: string[], flags: Flags) => Promise<void> }
