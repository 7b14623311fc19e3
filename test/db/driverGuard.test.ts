// The one postgres.js crash a gateway survives (src/db/pg/driverGuard.ts), recognised by its message and
// stack, and nothing else: a look-alike from our own code or another library still ends the process.
import { expect, test } from 'vitest'
import { isNullSocketWrite } from '../../src/db/pg/driverGuard.js'

const withStack = (message: string, stack: string) => Object.assign(new TypeError(message), { stack: `TypeError: ${message}\n${stack}` })

test('the driver bug: a null socket written from nextWrite inside postgres.js', () => {
  const nodeStack = '    at Immediate.nextWrite (file:///app/node_modules/postgres/src/connection.js:255:22)\n    at process.processImmediate (node:internal/timers:485:21)'
  expect(isNullSocketWrite(withStack("Cannot read properties of null (reading 'write')", nodeStack))).toBe(true)
  const cjsStack = '    at Immediate.nextWrite (/app/node_modules/postgres/cjs/src/connection.js:255:22)'
  expect(isNullSocketWrite(withStack("Cannot read properties of null (reading 'write')", cjsStack))).toBe(true)
})

test('anything else is not it', () => {
  const ours = '    at nextWrite (file:///app/src/feed/feedHub.ts:10:3)'
  expect(isNullSocketWrite(withStack("Cannot read properties of null (reading 'write')", ours))).toBe(false)
  const other = '    at Immediate.nextWrite (file:///app/node_modules/postgres/src/connection.js:255:22)'
  expect(isNullSocketWrite(withStack("Cannot read properties of null (reading 'end')", other))).toBe(false)
  expect(isNullSocketWrite(new Error("Cannot read properties of null (reading 'write')"))).toBe(false)
  expect(isNullSocketWrite('nextWrite')).toBe(false)
})
