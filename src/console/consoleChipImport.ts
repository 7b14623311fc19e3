import { rowProblems } from '../attendees/parseGuestList.js'
import { readCsv } from '../attendees/readCsv.js'
import type { Config } from '../config.js'
import type { Store, Tx } from '../db/store.js'
import type { TokenRow } from '../db/tokens.js'
import { BaseError, ValidationError } from '../errors.js'
import { importInto, type ImportSummary, parseImportFile } from '../importer/importData.js'
import { teamToken } from '../phygitals/items.js'
import { ChipUid, IntId } from '../schemas/common.js'

/*
 * Registering chips from the console: a `tapgate import` file limited to the session's team, or a CSV
 * chip list turned into one. Both go through the import's own importInto in one transaction, so its
 * rules (a chip of another team is an error, never a move; groups made when new; profile checks)
 * are the CLI's, and a file with any problem imports nothing.
 */

export type ChipImportDeps = { store: Store; config: Config; now: () => number; secret: Buffer }

/** The import's summary, and how many chips the file listed (a CSV's data rows). */
export type ChipImportResult = { summary: ImportSummary; chips: number }

/** What a chip file is sent as: the body itself, JSON (an import file) or CSV (a chip list). */
export const CHIP_FILE_TYPES = ['application/json', 'text/csv']

/** The largest chip file: an import file or a list of tens of thousands of chips, well past a console upload. */
export const MAX_CHIP_FILE_BYTES = 1024 * 1024

/** A chip list's columns, in the order the hint names them; only `uid` is required. */
const COLUMNS = ['uid', 'profile', 'group', 'product'] as const
type Column = (typeof COLUMNS)[number]
const isColumn = (name: string): name is Column => (COLUMNS as readonly string[]).includes(name)
const LIST_LABEL = 'chip list'

const importOptions = (deps: ChipImportDeps) => ({ config: deps.config, now: deps.now(), secret: deps.secret })

/**
 * Imports a `tapgate import` file (parseImportFile, importInto) whose every team is the session's:
 * another team's name is 400 at `teams.N.name`, before anything is written.
 *
 * @throws ValidationError validation_failed (the file's paths, as `tapgate import` names them)
 */
export async function importConsoleFile(deps: ChipImportDeps, p: { team: { id: number; name: string }; data: unknown }): Promise<ChipImportResult> {
  const data = parseImportFile(p.data)
  const errors: Record<string, string> = {}
  for (const [i, team] of data.teams.entries())
    if (team.name !== p.team.name)
      errors[`teams.${i}.name`] = `This console is signed in to team ${JSON.stringify(p.team.name)}; the file is for ${JSON.stringify(team.name)}`
  if (Object.keys(errors).length > 0) throw new ValidationError('The file is for another team; nothing was imported', errors)
  const summary = await deps.store.tx((tx) => importInto(tx, data, importOptions(deps)))
  return { summary, chips: data.teams.reduce((n, team) => n + team.chips.length, 0) }
}

/** Where each entry of the import file built from a chip list came from: its CSV line. */
type Lines = { chips: number[]; tokens: number[][] }

/**
 * Imports a CSV chip list for the session's team: a header row naming `uid` and any of `profile`,
 * `group`, `product` (any case, any order), one chip per row. A row becomes a chip of the import file
 * (an empty cell: that field left out, so what is stored stays), and its `product` (a product id as
 * the console lists it) a link in that token's `chips`. Every problem is 400 csv_rows_invalid at its
 * `line N, column`, the import's own errors too, and nothing is imported.
 *
 * @throws ValidationError csv_rows_invalid, csv_no_rows, csv_unreadable (readCsv); CsvLimitError
 */
export async function importConsoleChipList(deps: ChipImportDeps, p: { team: { id: number; name: string }; csv: Uint8Array }): Promise<ChipImportResult> {
  if (new TextDecoder().decode(p.csv).replace(/^\uFEFF/, '').trim() === '')
    throw new ValidationError('The file is empty: a chip list needs a header row (uid, profile, group, product) and a chip on each row after it', { file: 'The file is empty' }, 'csv_unreadable')
  const table = readCsv(p.csv)
  const columns = chipListColumns(table.header)
  if (table.rows.length === 0) throw new ValidationError('The file has a header but no chips', { file: 'No row after the header' }, 'csv_no_rows')
  return deps.store.tx(async (tx) => {
    const { data, lines } = await chipListFile(tx, p.team, columns, table.rows)
    try {
      return { summary: await importInto(tx, parseImportFile(data), importOptions(deps)), chips: table.rows.length }
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      // The import names paths of the file built here (teams.0.chips.3.profile): said again at the CSV's lines.
      const problems = rowProblems()
      for (const [path, message] of Object.entries(error.errors ?? {})) {
        const at = lineOf(path, lines)
        problems.fail(at.line, at.column, message)
      }
      problems.throwIfAny(LIST_LABEL)
      throw error
    }
  })
}

/**
 * The column of each name in a chip list's header (case ignored).
 *
 * @throws ValidationError csv_rows_invalid at line 1: an unknown, unnamed or repeated column, or no `uid`
 */
function chipListColumns(header: readonly string[]): Partial<Record<Column, number>> {
  const problems = rowProblems()
  const columns: Partial<Record<Column, number>> = {}
  const known = 'a chip list has the columns uid, profile, group and product'
  for (const [i, raw] of header.entries()) {
    const name = raw.toLowerCase()
    if (name === '') problems.fail(1, `column ${i + 1}`, `A column without a name; ${known}`)
    else if (!isColumn(name)) problems.fail(1, raw, `Unknown column "${raw}"; ${known}`)
    else if (columns[name] !== undefined) problems.fail(1, raw, `Column "${name}" is given twice`)
    else columns[name] = i
  }
  if (columns.uid === undefined && problems.count === 0) problems.fail(1, 'uid', `The header row has no uid column; ${known}`)
  problems.throwIfAny(LIST_LABEL)
  return columns
}

/** A `tokens` entry of the import file, as this module writes one (parseImportFile checks it as any other). */
type TokenEntry = { chainId: number; contractAddress: string; tokenId: string; chips: string[] }

/** A product's token, to link chips to: what the entry leaves out (metadata, 2-tap claim) stays as stored. */
function tokenEntry(token: TokenRow): TokenEntry {
  return { chainId: token.chainId, contractAddress: token.contractAddress, tokenId: token.tokenId, chips: [] }
}

/**
 * The import file a chip list stands for (one team: the session's), and the CSV line of each entry.
 * Checks first what only the list can get wrong (a UID, a product id, a UID twice), every row.
 *
 * @throws ValidationError csv_rows_invalid
 */
async function chipListFile(
  tx: Tx,
  team: { id: number; name: string },
  columns: Partial<Record<Column, number>>,
  rows: readonly { line: number; cells: string[] }[],
): Promise<{ data: unknown; lines: Lines }> {
  const problems = rowProblems()
  const chips: Record<string, unknown>[] = []
  const lines: Lines = { chips: [], tokens: [] }
  const tokens = new Map<number, { entry: TokenEntry; index: number }>()
  const products = new Map<number, TokenRow | null>()
  const firstLine = new Map<string, number>()
  for (const { line, cells } of rows) {
    const cell = (column: Column) => {
      const at = columns[column]
      return at === undefined ? '' : (cells[at] ?? '').trim()
    }
    const before = problems.count
    const uid = ChipUid.safeParse(cell('uid'))
    if (!uid.success) problems.fail(line, 'uid', cell('uid') === '' ? 'Required: the chip\'s UID' : uid.error.issues[0]!.message)
    else if (firstLine.has(uid.data)) problems.fail(line, 'uid', `Chip ${uid.data} is on line ${firstLine.get(uid.data)} already`)
    else firstLine.set(uid.data, line)
    let product: TokenRow | null = null
    if (cell('product') !== '') {
      const id = IntId.safeParse(cell('product'))
      if (!id.success) problems.fail(line, 'product', `"${cell('product')}" is not a product id: the number the console lists a product by`)
      else {
        if (!products.has(id.data)) products.set(id.data, await teamProduct(tx, team.id, id.data))
        product = products.get(id.data)!
        if (product === null) problems.fail(line, 'product', `No product with id ${id.data} in this team`)
      }
    }
    if (problems.count > before || !uid.success) continue
    chips.push({
      uid: uid.data,
      ...(cell('profile') === '' ? {} : { profile: cell('profile') }),
      ...(cell('group') === '' ? {} : { group: cell('group') }),
    })
    lines.chips.push(line)
    if (product === null) continue
    let token = tokens.get(product.id)
    if (!token) {
      token = { entry: tokenEntry(product), index: tokens.size }
      tokens.set(product.id, token)
      lines.tokens.push([])
    }
    token.entry.chips.push(uid.data)
    lines.tokens[token.index]!.push(line)
  }
  problems.throwIfAny(LIST_LABEL)
  return { data: { teams: [{ name: team.name, chips, tokens: [...tokens.values()].map((t) => t.entry) }] }, lines }
}

/** The team's product (items.ts's lookup), or null for an unknown id and another team's alike. */
async function teamProduct(tx: Tx, teamId: number, id: number): Promise<TokenRow | null> {
  try {
    return await teamToken(tx, teamId, id)
  } catch (error) {
    if (error instanceof BaseError && error.code === 'item_not_found') return null
    throw error
  }
}

/** The CSV line and column an import path points at: a chip's row, or the row that linked a chip to its product. */
function lineOf(path: string, lines: Lines): { line: number; column: string } {
  const chip = /^teams\.0\.chips\.(\d+)(?:\.([^.]+))?/.exec(path)
  if (chip && lines.chips[Number(chip[1])] !== undefined) {
    const field = chip[2] ?? 'uid'
    // A profile's own demands (a per-chip file key, a key version) come from the profile the row names.
    const column = isColumn(field) ? field : field === 'fileKey' || field === 'keyVersion' ? 'profile' : 'uid'
    return { line: lines.chips[Number(chip[1])]!, column }
  }
  const link = /^teams\.0\.tokens\.(\d+)(?:\.chips\.(\d+))?/.exec(path)
  const tokenLines = link ? lines.tokens[Number(link[1])] : undefined
  if (link && tokenLines) return { line: tokenLines[Number(link[2] ?? 0)] ?? tokenLines[0]!, column: 'product' }
  // Nothing of the list's own (a team-level problem): line 1 holds the header, the list as a whole.
  return { line: 1, column: path }
}
