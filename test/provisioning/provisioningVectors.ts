import { readFileSync } from 'node:fs'

/** One entry of test/vectors/provisioning-public.json (copied from ../shared/vectors, plus supplementary entries). */
export type ProvisioningVector = {
  name: string
  kind: string
  source: string
  notes?: string
  supplementary?: boolean
  inputs: Record<string, unknown>
  expected: Record<string, unknown>
}

const file = JSON.parse(readFileSync(new URL('../vectors/provisioning-public.json', import.meta.url), 'utf8')) as { vectors: ProvisioningVector[] }

/** Every vector, for the coverage check. */
export const provisioningVectors: readonly ProvisioningVector[] = file.vectors

/** The vector of that name; throws so a renamed vector fails its test loudly. */
export function vector<I = Record<string, string>, E = Record<string, string>>(name: string): { inputs: I; expected: E; notes?: string } {
  const v = file.vectors.find((x) => x.name === name)
  if (!v) throw new Error(`no vector ${name} in test/vectors/provisioning-public.json`)
  return v as unknown as { inputs: I; expected: E; notes?: string }
}

/** Hex to bytes, strictly (a typo in a vector must not shorten it silently). */
export function hex(h: string): Buffer {
  if (!/^([0-9A-Fa-f]{2})*$/.test(h)) throw new Error(`not hex: ${h}`)
  return Buffer.from(h, 'hex')
}

/** Bytes to uppercase hex, the vectors' form. */
export function toHexU(b: Uint8Array): string {
  return Buffer.from(b).toString('hex').toUpperCase()
}
