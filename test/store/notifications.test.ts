import { setTimeout as sleep } from 'node:timers/promises'
import { expect, it, onTestFinished } from 'vitest'
import type { ChainTxInsert } from '../../src/db/chainTxs.js'
import type { StoreChannel } from '../../src/db/types.js'
import { describeStores } from '../helpers/stores.js'

// Issue 24: the store, not each caller, tells the feed hub and the relayer what a commit wrote. A
// transaction that appended a station event announces `tapgate_feed` (the station id), one that
// queued a chain transaction `tapgate_outbox` (the chain id), both as after-commit effects of the
// transaction, savepoint or group-commit job that wrote them. On PostgreSQL LISTEN may deliver this
// process's notification a second time, so what arrived is compared as a set.

const CHAIN = 31337
let nonce = 0
const outboxRow = (): ChainTxInsert => {
  const n = ++nonce
  return {
    chainId: CHAIN, sender: '0xaa00000000000000000000000000000000000000', nonce: n, kind: 'transfer', toAddress: null, data: '0x',
    gas: 21_000, maxFeePerGas: '1', maxPriorityFeePerGas: '1', rawTx: `0xraw${n}`, txHash: `0x${n.toString(16).padStart(64, '0')}`, createdAt: n,
  }
}
const boom = () => {
  throw new Error('refused by the test')
}
/** Long enough for a PostgreSQL notification that was sent to arrive over LISTEN. */
const SETTLE_MS = 300

describeStores('store notifications', ({ store }) => {
  const listening = async () => {
    const heard = new Set<string>()
    for (const channel of ['tapgate_feed', 'tapgate_outbox'] as StoreChannel[]) {
      const stop = await store().listen(channel, (payload) => heard.add(`${channel}:${payload}`))
      onTestFinished(stop)
    }
    return heard
  }
  const stations = async () => {
    const teamId = await store().teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    const door = await store().stations.insert({ teamId, name: 'Door', prefix: 'tgst_d', hash: 'h-d', now: 1 })
    const bar = await store().stations.insert({ teamId, name: 'Bar', prefix: 'tgst_b', hash: 'h-b', now: 1 })
    return { door, bar }
  }
  const append = (tx: Pick<ReturnType<typeof store>, 'stationEvents'>, stationId: number) =>
    tx.stationEvents.append(stationId, 'staff', { action: 'login', summary: 'staff session opened' }, 1)

  it('a commit that appended a station event and queued a chain transaction announces both, by the time the commit returns', async () => {
    const { door } = await stations()
    const heard = await listening()
    await store().tx(async (tx) => {
      await append(tx, door)
      await tx.chainTxs.insert(outboxRow())
      // Nothing before the COMMIT: a listener must find the rows it is told of.
      await sleep(20)
      expect([...heard]).toEqual([])
    })
    // No poll, no timer: this process's own commit is told at once.
    expect([...heard].sort()).toEqual([`tapgate_feed:${door}`, `tapgate_outbox:${CHAIN}`])
  })

  it('a rolled-back transaction announces nothing, and a write that announces nothing stays silent', async () => {
    const { door } = await stations()
    const heard = await listening()
    await expect(
      store().tx(async (tx) => {
        await append(tx, door)
        await tx.chainTxs.insert(outboxRow())
        boom()
      }),
    ).rejects.toThrow('refused by the test')
    await store().tx((tx) => tx.teams.insert({ name: 'Other', redirectUrl: null, now: 1 }))
    await sleep(SETTLE_MS)
    expect([...heard]).toEqual([])
  })

  it('a savepoint that rolls back drops only its own notification', async () => {
    const { door, bar } = await stations()
    const heard = await listening()
    await store().tx(async (tx) => {
      await append(tx, door)
      await expect(
        tx.tx(async (inner) => {
          await append(inner, bar)
          await inner.chainTxs.insert(outboxRow())
          boom()
        }),
      ).rejects.toThrow('refused by the test')
    })
    await sleep(SETTLE_MS)
    expect([...heard]).toEqual([`tapgate_feed:${door}`])
  })

  it('a group-commit job that throws drops only its own notification; the others of its commit announce theirs', async () => {
    const { door, bar } = await stations()
    const heard = await listening()
    const jobs = await Promise.allSettled([
      store().batch((tx) => append(tx, door)),
      store().batch(async (tx) => {
        await append(tx, bar)
        await tx.chainTxs.insert(outboxRow())
        boom()
      }),
    ])
    expect(jobs.map((j) => j.status)).toEqual(['fulfilled', 'rejected'])
    await sleep(SETTLE_MS)
    expect([...heard]).toEqual([`tapgate_feed:${door}`])
  })

  it('a lone statement announces once it ran; a listener that stopped hears nothing more', async () => {
    const { door, bar } = await stations()
    const heard = new Set<string>()
    const stop = await store().listen('tapgate_feed', (payload) => heard.add(payload))
    await append(store(), door)
    expect([...heard]).toEqual([String(door)])
    await stop()
    await append(store(), bar)
    await sleep(SETTLE_MS)
    expect([...heard]).toEqual([String(door)])
  })
})
