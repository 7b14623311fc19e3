import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { compileContracts } from '../../contracts/build.js'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))

describe('contracts/build.ts', () => {
  it('reproduces the committed artifacts byte for byte (else: npm run build:contracts)', () => {
    const files = compileContracts()
    expect(Object.keys(files).sort()).toEqual(['contracts/artifacts/Guestbook.ts', 'contracts/artifacts/PhygitalToken.ts'])
    for (const [path, content] of Object.entries(files)) {
      expect(readFileSync(join(repoRoot, path), 'utf8'), `${path} is out of date; run npm run build:contracts`).toBe(content)
    }
  })
})
