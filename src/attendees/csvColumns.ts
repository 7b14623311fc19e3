import type { CsvRow } from './readCsv.js'

/** A value read from a row, with the header of the column it came from (what an error names). */
export type Cell = { value: string; column: string }

/**
 * A header's columns by name. Names match after trimming, exactly first, then ignoring case (pretix
 * writes `Email` or `E-mail`, a re-saved sheet may change case). A header repeated (pretix's order
 * data has `Company` twice) answers its first column.
 */
export type Columns = {
  /** The header as written, of the first column matching one of `names`; undefined when none is there. */
  find(...names: string[]): string | undefined
  has(...names: string[]): boolean
  /** How often a header appears (after trimming, any case). */
  count(name: string): number
  header: readonly string[]
  /** The cell of the first column matching one of `names` in `row`, trimmed; empty (column: the first name) when none is there. */
  cell(row: CsvRow, ...names: string[]): Cell
}

export function columnsOf(header: readonly string[]): Columns {
  const exact = new Map<string, number>()
  const folded = new Map<string, number>()
  const counts = new Map<string, number>()
  header.forEach((name, index) => {
    if (!exact.has(name)) exact.set(name, index)
    const key = name.toLowerCase()
    if (!folded.has(key)) folded.set(key, index)
    counts.set(key, (counts.get(key) ?? 0) + 1)
  })
  const indexOf = (names: string[]) => {
    for (const name of names) {
      const index = exact.get(name) ?? folded.get(name.toLowerCase())
      if (index !== undefined) return index
    }
    return undefined
  }
  return {
    header,
    find: (...names) => {
      const index = indexOf(names)
      return index === undefined ? undefined : header[index]
    },
    has: (...names) => indexOf(names) !== undefined,
    count: (name) => counts.get(name.trim().toLowerCase()) ?? 0,
    cell: (row, ...names) => {
      const index = indexOf(names)
      if (index === undefined) return { value: '', column: names[0]! }
      return { value: (row.cells[index] ?? '').trim(), column: header[index]! }
    },
  }
}
