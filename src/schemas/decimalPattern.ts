/**
 * A regular expression source (anchored) matching the canonical decimal form
 * (no sign, no leading zeros) of every integer from `min` (0 or 1) to `max`.
 * JSON Schema can bound numbers but not digit strings, so the OpenAPI document
 * says "uint256" or "a safe positive integer" for a string this way.
 *
 * @example
 * new RegExp(decimalAtMost(255n)).test('256') // false
 */
export function decimalAtMost(max: bigint, { min = 0 }: { min?: 0 | 1 } = {}): string {
  const digits = max.toString()
  const n = digits.length
  const range = (from: number, to: number) => (from === to ? String(from) : `[${from}-${to}]`)
  const alternatives: string[] = []
  if (min === 0) alternatives.push('0')
  // Every number with fewer digits than max.
  if (n >= 2) alternatives.push(n === 2 ? '[1-9]' : `[1-9]\\d{0,${n - 2}}`)
  // Numbers with as many digits as max: max's first i digits, then a smaller digit, then anything.
  for (let i = 0; i < n; i++) {
    const low = i === 0 ? 1 : 0
    const high = Number(digits[i]) - 1
    if (high < low) continue
    const rest = n - 1 - i
    alternatives.push(`${digits.slice(0, i)}${range(low, high)}${rest === 0 ? '' : rest === 1 ? '\\d' : `\\d{${rest}}`}`)
  }
  if (!(min === 1 && max === 0n)) alternatives.push(digits)
  return `^(?:${[...new Set(alternatives)].join('|')})$`
}
