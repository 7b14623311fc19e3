/**
 * The README's testing examples are the files the test suite runs (test/testing/packedTesting.test.ts
 * runs docs/examples/testing/ from an npm pack install): what a reader copies is what passed.
 */
import fs from 'node:fs'
import path from 'node:path'
import { expect, test } from 'vitest'
import { repoRoot } from '../helpers/processes.js'

test.each(['claimToken.vitest.test.ts', 'claimToken.node-test.mjs'])('README "Testing your app against tapgate" shows %s as it is', (file) => {
  const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8')
  const example = fs.readFileSync(path.join(repoRoot, 'docs/examples/testing', file), 'utf8')
  expect(readme).toContain(`\n${example}\`\`\``)
})
