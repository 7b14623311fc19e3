import { expect } from 'vitest'

/**
 * The error `fn` throws, checked to be a `type` when one is given, so a test can assert on its fields
 * (code, status, errors). Fails the test when `fn` returns.
 *
 * @example
 * expect(thrown(() => upsertChipProfile(store, secret, bad), ValidationError).errors).toHaveProperty('urlTemplate')
 */
export function thrown(fn: () => unknown): unknown
export function thrown<E extends Error>(fn: () => unknown, type: abstract new (...args: never[]) => E): E
export function thrown(fn: () => unknown, type?: abstract new (...args: never[]) => Error): unknown {
  try {
    fn()
  } catch (error) {
    if (type) expect(error).toBeInstanceOf(type)
    return error
  }
  throw new Error(`expected ${type ? `a ${type.name}` : 'an error'}`)
}
