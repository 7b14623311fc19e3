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

/**
 * The error `promise` rejects with, checked to be a `type` when one is given: `thrown` for a function
 * that is asynchronous. Fails the test when the promise resolves.
 *
 * @example
 * expect((await rejected(upsertChipProfile(store, secret, bad), ValidationError)).errors).toHaveProperty('urlTemplate')
 */
export async function rejected(promise: Promise<unknown>): Promise<unknown>
export async function rejected<E extends Error>(promise: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E>
export async function rejected(promise: Promise<unknown>, type?: abstract new (...args: never[]) => Error): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    if (type) expect(error).toBeInstanceOf(type)
    return error
  }
  throw new Error(`expected ${type ? `a ${type.name}` : 'an error'}`)
}
