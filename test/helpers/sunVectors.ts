import { readFileSync } from 'node:fs'

/** One entry of test/vectors/sun-public.json (copied from ../shared/vectors): the fields the tests read. */
export type SunVector = {
  id: string
  kind: string
  mode?: 'AES' | 'LRP'
  url?: string
  keys?: { sdmMetaReadKey?: string; sdmFileReadKey?: string }
  input: { piccData?: string; encFileData?: string | null; sdmmac?: string; macInput?: string; uid?: string; ctr?: string; counter?: number }
  expected: {
    valid?: boolean
    uid?: string
    readCtr?: number
    fileData?: string | null
    ascii?: string
    intermediate?: { decryptedPiccData?: string }
  }
  ndef?: { uriIdentifierCode: number; offsets: { piccData: number; encFileData?: number; macInput: number; mac: number } }
}

/** The published SUN/SDM vectors (NXP AN12196, AN12304, Bolt Card, …). */
export const sunVectors: SunVector[] = (
  JSON.parse(readFileSync(new URL('../vectors/sun-public.json', import.meta.url), 'utf8')) as { vectors: SunVector[] }
).vectors
