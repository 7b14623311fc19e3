/*
 * The five application keys of a software NTAG 424 DNA, their versions and the
 * failed-authentication counter (NT4H2421Gx §9, SetConfiguration option 0A;
 * research notes §1). One store per card, so ChangeKey is one assignment: a
 * pulled card holds the old key or the new one, never a mix.
 */

/** Application keys 0–4 (key 0 is the AppMasterKey). */
export const KEY_COUNT = 5

/** Factory TotFailCtrLimit and TotFailCtrDecr (NT4H2421Gx Table 50, option 0A). */
export const FACTORY_FAIL_LIMIT = 1000
export const FACTORY_FAIL_DECREMENT = 10

export type FailedAuthPolicy = {
  /** TotFailCtrLimit: at this many (net) failures the key is blocked and authentication answers 91 AD. */
  limit: number
  /** TotFailCtrDecr: what a successful authentication takes off the counter. */
  decrement: number
}

/** A key slot as the card holds it. */
export type KeySlot = { key: Buffer; version: number; failures: number }

/**
 * The card's key store. The failed-authentication model: each wrong key adds 1
 * to the key's TotFailCtr, each success takes `decrement` off (not below 0), and
 * a key whose counter reached `limit` is blocked for good (a real chip keeps this
 * across power cycles; so does this store, which reset() never touches). ChangeKey
 * clears the counter of the key it changes.
 */
export class CardKeys {
  readonly #slots: KeySlot[]
  #policy: FailedAuthPolicy

  constructor(keys?: readonly Uint8Array[], policy?: Partial<FailedAuthPolicy>) {
    this.#slots = Array.from({ length: KEY_COUNT }, (_, i) => ({ key: Buffer.from(keys?.[i] ?? Buffer.alloc(16)), version: 0, failures: 0 }))
    this.#policy = { limit: policy?.limit ?? FACTORY_FAIL_LIMIT, decrement: policy?.decrement ?? FACTORY_FAIL_DECREMENT }
  }

  key(keyNo: number): Buffer {
    return Buffer.from(this.#slot(keyNo).key)
  }

  version(keyNo: number): number {
    return this.#slot(keyNo).version
  }

  /** TotFailCtr of a key. */
  failures(keyNo: number): number {
    return this.#slot(keyNo).failures
  }

  blocked(keyNo: number): boolean {
    return this.#slot(keyNo).failures >= this.#policy.limit
  }

  get policy(): FailedAuthPolicy {
    return { ...this.#policy }
  }

  /** SetConfiguration option 0A. */
  setPolicy(policy: FailedAuthPolicy): void {
    this.#policy = { ...policy }
  }

  authenticated(keyNo: number): void {
    const s = this.#slot(keyNo)
    s.failures = Math.max(0, s.failures - this.#policy.decrement)
  }

  failed(keyNo: number): void {
    this.#slot(keyNo).failures += 1
  }

  /** ChangeKey: key and version in one step; the key's failure counter starts over. */
  change(keyNo: number, key: Uint8Array, version: number): void {
    this.#slots[keyNo] = { key: Buffer.from(key), version, failures: 0 }
  }

  #slot(keyNo: number): KeySlot {
    const s = this.#slots[keyNo]
    if (!s) throw new RangeError(`key number ${keyNo} is not 0–${KEY_COUNT - 1}`)
    return s
  }
}
