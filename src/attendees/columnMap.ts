import { ValidationError } from '../errors.js'
import type { Columns } from './csvColumns.js'
import type { GuestListFormat } from './guestListFormats.js'

/** Our fields a `--map` can name, each to one column of the file. */
export const MAP_FIELDS = ['name', 'email', 'ticket', 'type', 'chip', 'wallet', 'note', 'paid'] as const
export type MapField = (typeof MAP_FIELDS)[number]
export type ColumnMap = Partial<Record<MapField, string>>

const mapError = (message: string, errors: Record<string, string>, code = 'csv_map_invalid') => new ValidationError(message, errors, code)

/**
 * Parses `name=Full Name,email=E-mail,ticket=Code,type=Ticket`: our field, `=`, the file's column
 * header (spaces kept, matched ignoring case). `name` and `ticket` are required.
 *
 * @throws ValidationError `csv_map_invalid` for an unknown field, a field named twice, a missing name or ticket
 * @example
 * parseColumnMap('name=Guest,ticket=Barcode') // { name: 'Guest', ticket: 'Barcode' }
 */
export function parseColumnMap(text: string): ColumnMap {
  const map: ColumnMap = {}
  for (const part of text.split(',')) {
    if (part.trim() === '') continue
    const eq = part.indexOf('=')
    const field = (eq === -1 ? part : part.slice(0, eq)).trim().toLowerCase()
    const column = eq === -1 ? '' : part.slice(eq + 1).trim()
    if (!(MAP_FIELDS as readonly string[]).includes(field))
      throw mapError(`--map: unknown field "${field}"`, { map: `Fields are ${MAP_FIELDS.join(', ')}; "${field}" is none of them` })
    if (column === '') throw mapError(`--map: ${field} names no column`, { [`map.${field}`]: `Write ${field}=<the column's header>` })
    if (map[field as MapField] !== undefined) throw mapError(`--map: ${field} is given twice`, { [`map.${field}`]: 'Map each field once' })
    map[field as MapField] = column
  }
  for (const field of ['name', 'ticket'] as const)
    if (map[field] === undefined) throw mapError(`--map needs ${field}=<column>`, { [`map.${field}`]: `Which column holds the guest's ${field === 'ticket' ? 'ticket code' : 'name'}` })
  return map
}

/**
 * A format reading the columns `map` names. Every column must be in the header, once.
 *
 * @throws ValidationError `csv_map_unknown_column` naming a column the file does not have, with the columns it has
 */
export function mappedFormat(map: ColumnMap, columns: Columns): GuestListFormat {
  const errors: Record<string, string> = {}
  for (const [field, column] of Object.entries(map)) {
    if (!columns.has(column)) errors[`map.${field}`] = `No column "${column}" in the file`
    else if (columns.count(column) > 1) errors[`map.${field}`] = `The file has ${columns.count(column)} columns named "${column}": rename one`
  }
  if (Object.keys(errors).length > 0) {
    const missing = Object.values(map).filter((column) => !columns.has(column))
    const shown = columns.header.slice(0, 40).map((name) => `"${name}"`).join(', ')
    errors.columns = `The file's columns: ${shown}${columns.header.length > 40 ? `, … (${columns.header.length} in all)` : ''}`
    throw mapError(
      missing.length > 0 ? `--map names a column the file does not have: ${missing.map((name) => `"${name}"`).join(', ')}` : '--map names a column that appears more than once',
      errors,
      'csv_map_unknown_column',
    )
  }
  const optional = (row: Parameters<Columns['cell']>[0], column: string | undefined) => {
    if (column === undefined) return null
    const cell = columns.cell(row, column)
    return cell.value === '' ? null : cell
  }
  return {
    id: 'map',
    label: '--map',
    signature: [],
    read: (c, rows) =>
      rows.map((row) => ({
        line: row.line,
        name: c.cell(row, map.name!),
        email: optional(row, map.email),
        ticket: c.cell(row, map.ticket!),
        type: optional(row, map.type),
        chip: optional(row, map.chip),
        wallet: optional(row, map.wallet),
        note: optional(row, map.note),
        needsAttention: null,
        skip: null,
        // yes/no, checked with the row (our own export's `paid` column reads back so).
        ...(map.paid === undefined ? {} : { paid: c.cell(row, map.paid) }),
      })),
  }
}
