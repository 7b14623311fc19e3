import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it } from 'vitest'
import type { Isolation } from '../../src/db/types.js'
import { describeStores } from '../helpers/stores.js'

const CHAIN = 31337
const SENDER = '0x00000000000000000000000000000000000000aa'
const key = (holder: string) => ({ chainId: CHAIN, sender: SENDER, holder })

describeStores('relayerLeases', ({ store }) => {
  it('takes a free lease, renews its own, leaves another holder\'s running lease alone, in database time', async () => {
    const s = store()
    expect(await s.relayerLeases.get(CHAIN, SENDER)).toBeUndefined()
    const before = Date.now()
    expect(await s.relayerLeases.acquire(key('gw-a'), 60_000)).toBe(1)
    const after = Date.now()
    const lease = await s.relayerLeases.get(CHAIN, SENDER)
    expect(lease).toEqual({ holder: 'gw-a', epoch: 1, expiresAt: expect.any(Number) })
    // The database's clock runs on this machine in tests: within the call's span (1 ms for truncation).
    expect(lease!.expiresAt).toBeGreaterThanOrEqual(before + 60_000 - 1)
    expect(lease!.expiresAt).toBeLessThanOrEqual(after + 60_000 + 1)

    expect(await s.relayerLeases.acquire(key('gw-a'), 90_000)).toBe(1)
    expect((await s.relayerLeases.get(CHAIN, SENDER))!.expiresAt).toBeGreaterThanOrEqual(before + 90_000 - 1)
    expect(await s.relayerLeases.acquire(key('gw-b'), 60_000)).toBeNull()
    expect(await s.relayerLeases.acquire({ chainId: 1, sender: SENDER, holder: 'gw-b' }, 60_000)).toBe(1)
    expect(await s.relayerLeases.holds(key('gw-a'), 1)).toBe(true)
    expect(await s.relayerLeases.holds(key('gw-a'), 2)).toBe(false)
    expect(await s.relayerLeases.holds(key('gw-b'), 1)).toBe(false)
  })

  it('hands the lease over on release or expiry, raising the epoch, and fences the old holder', async () => {
    const s = store()
    expect(await s.relayerLeases.acquire(key('gw-a'), 60_000)).toBe(1)
    expect(await s.relayerLeases.release(key('gw-b'))).toBe(false)
    expect(await s.relayerLeases.release(key('gw-a'))).toBe(true)
    expect(await s.relayerLeases.get(CHAIN, SENDER)).toEqual({ holder: 'gw-a', epoch: 1, expiresAt: 0 })
    // Released: the holder itself keeps its epoch, another raises it.
    expect(await s.relayerLeases.acquire(key('gw-b'), 50)).toBe(2)
    expect(await s.relayerLeases.holds(key('gw-a'), 1)).toBe(false)
    expect(await s.relayerLeases.acquire(key('gw-a'), 60_000)).toBeNull()
    await sleep(80)
    // Expired (not released): the next taker raises the epoch again; the expired holder is fenced out.
    expect(await s.relayerLeases.acquire(key('gw-c'), 60_000)).toBe(3)
    expect(await s.relayerLeases.holds(key('gw-b'), 2)).toBe(false)
    expect(await s.relayerLeases.holds(key('gw-c'), 3)).toBe(true)
    expect(await s.relayerLeases.get(CHAIN, SENDER)).toEqual({ holder: 'gw-c', epoch: 3, expiresAt: expect.any(Number) })
  })

  const racers = 20
  for (const isolation of ['read committed', 'serializable'] as const) {
    it(`gives a free, then an expired lease to one of ${racers} racing gateways (${isolation})`, async () => {
      const s = store()
      // A lease long enough that every racer has run before it expires: 20 transactions take turns on a
      // pool of 4 connections (serialization failures retried), which a 50 ms lease did not always outlast.
      const LEASE_MS = 1000
      const race = () => Promise.all(Array.from({ length: racers }, (_, i) => s.tx((tx) => tx.relayerLeases.acquire(key(`gw-${i}`), LEASE_MS), { isolation })))
      const first = await race()
      expect(first.filter((e) => e !== null)).toEqual([1])
      const winner = first.findIndex((e) => e !== null)
      expect((await s.relayerLeases.get(CHAIN, SENDER))?.holder).toBe(`gw-${winner}`)
      await sleep(LEASE_MS + 30)
      const second = await race()
      const next = second.findIndex((e) => e !== null)
      // The expired holder renewing keeps its epoch; anyone else raises it.
      expect(second.filter((e) => e !== null)).toEqual([next === winner ? 1 : 2])
    })

    it(`a takeover waits for the fenced write in flight, and then sees it (${isolation})`, async () => {
      const s = store()
      expect(await s.relayerLeases.acquire(key('gw-a'), 50)).toBe(1)
      const id = await s.chainTxs.insert({
        chainId: CHAIN, sender: SENDER, nonce: 0, kind: 'transfer', toAddress: null, data: '0x', gas: 21_000, maxFeePerGas: '1',
        maxPriorityFeePerGas: '1', rawTx: '0x01', txHash: `0x${'1'.padStart(64, '0')}`, createdAt: 1,
      })
      await sleep(80)
      // gw-a's lease has expired, but gw-a checked it inside its write's transaction before anyone took it.
      let open!: () => void
      const gate = new Promise<void>((resolve) => (open = resolve))
      let checked!: () => void
      const inside = new Promise<void>((resolve) => (checked = resolve))
      const write = s.tx(async (tx) => {
        const held = await tx.relayerLeases.holds(key('gw-a'), 1)
        checked()
        await gate
        if (held) await tx.chainTxs.markSent(id, 5, 'gw-a')
        return held
      }, { isolation: isolation as Isolation })
      await inside
      const takeover = s.relayerLeases.acquire(key('gw-b'), 60_000).then(async (epoch) => ({ epoch, row: await s.chainTxs.get(id) }))
      await sleep(150)
      open()
      expect(await write).toBe(true)
      const { epoch, row } = await takeover
      expect(epoch).toBe(2)
      expect(row).toMatchObject({ status: 'sent', sentAt: 5 })
      expect(await s.chainTxs.sentBy(CHAIN)).toEqual(new Map([['gw-a', 1]]))
    })
  }
})
