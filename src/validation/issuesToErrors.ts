import type { z } from 'zod'
import { ValidationError } from '../errors.js'

/**
 * Turns zod issues into the API's `errors` map: dotted field path → message,
 * first message per path (e.g. `{ "metadata.image": "Required" }`).
 */
export function issuesToErrors(issues: ReadonlyArray<z.core.$ZodIssue>, prefix = ''): Record<string, string> {
  const errors: Record<string, string> = {}
  for (const issue of issues) {
    const key = [prefix, ...issue.path.map(String)].filter((part) => part !== '').join('.') || 'body'
    errors[key] ??= issue.message
  }
  return errors
}

/**
 * Parses a field that carries JSON text (the spec's `metadata` strings) and
 * validates it, reporting problems under `field.<path>`.
 *
 * @example
 * const metadata = parseJsonField(body.metadata, PhygitalMetadata, 'metadata')
 */
export function parseJsonField<S extends z.ZodType>(text: string, schema: S, field: string): z.output<S> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new ValidationError(`${field} is not valid JSON`, { [field]: `Invalid JSON: ${(error as Error).message}` })
  }
  const result = schema.safeParse(value)
  if (!result.success) throw new ValidationError(`${field} failed validation`, issuesToErrors(result.error.issues, field))
  return result.data
}
