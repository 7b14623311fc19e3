// The one postgres.js crash a gateway survives (src/db/pg/driverGuard.ts), recognised by its message and
// stack, and nothing else: a look-alike from our own code or another library still ends the process.
import { expect, test } from 'vitest'
import { isDestroyedOnEnd, isNullSocketWrite } from '../../src/db/pg/driverGuard.js'

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

// Seen in test/postgres/outage: the store ended the old client after a lost connection, and a query
// postgres.js itself held (no handler of ours) was rejected from its destroy timer.
const destroyed = (stack: string) =>
  Object.assign(new Error('write CONNECTION_DESTROYED /tmp/pg/.s.PGSQL.5432'), { code: 'CONNECTION_DESTROYED', stack: `Error: write CONNECTION_DESTROYED /tmp/pg/.s.PGSQL.5432\n${stack}` })

test("the driver's own query rejected when the store ends a lost client", () => {
  const stack = [
    '    at Object.terminate (file:///app/node_modules/postgres/src/connection.js:425:20)',
    '    at file:///app/node_modules/postgres/src/index.js:385:46',
    '    at Array.map (<anonymous>)',
    '    at Timeout.destroy [as _onTimeout] (file:///app/node_modules/postgres/src/index.js:385:35)',
    '    at listOnTimeout (node:internal/timers:583:11)',
  ].join('\n')
  expect(isDestroyedOnEnd(destroyed(stack))).toBe(true)
  // Another code, another place, or the same code from our own code is not it.
  expect(isDestroyedOnEnd(Object.assign(destroyed(stack), { code: 'CONNECTION_CLOSED' }))).toBe(false)
  expect(isDestroyedOnEnd(destroyed('    at Object.terminate (file:///app/src/db/pg/store.ts:10:3)\n    at Timeout.destroy (file:///app/src/x.ts:1:1)'))).toBe(false)
  expect(isDestroyedOnEnd(destroyed('    at Connection.read (file:///app/node_modules/postgres/src/connection.js:100:1)'))).toBe(false)
  expect(isDestroyedOnEnd('CONNECTION_DESTROYED')).toBe(false)
})
