import { readdirSync, readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { provisioningVectors } from './provisioningVectors.js'

/**
 * Every vector in test/vectors/provisioning-public.json is named by a test, so a
 * vector added to the file without a test fails here instead of sitting unread.
 */
test('every provisioning vector is reproduced by a named test', () => {
  const dir = new URL('./', import.meta.url)
  const sources = readdirSync(dir)
    .filter((f) => f.endsWith('.test.ts') && f !== 'coverage.test.ts')
    .map((f) => readFileSync(new URL(f, dir), 'utf8'))
    .join('\n')
  const unread = provisioningVectors.map((v) => v.name).filter((name) => !sources.includes(`'${name}`))
  expect(unread).toEqual([])
  expect(provisioningVectors.length).toBe(27)
})
