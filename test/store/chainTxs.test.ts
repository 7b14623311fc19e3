import { expect, it } from 'vitest'
import type { ChainTxInsert, ChainTxRow } from '../../src/db/chainTxs.js'
import { isUniqueViolation } from '../../src/db/storeErrors.js'
import { describeStores } from '../helpers/stores.js'

const CHAIN = 31337
// Upper case sorts before lower case byte-wise (SQLite's BINARY), after it in most locales.
const SENDER_B = '0xBB00000000000000000000000000000000000000'
const SENDER_A = '0xaa00000000000000000000000000000000000000'

const hash = (n: number, salt = 0) => `0x${(salt * 1_000_000 + n).toString(16).padStart(64, '0')}`

const outboxRow = (nonce: number, over: Partial<ChainTxInsert> = {}): ChainTxInsert => ({
  chainId: CHAIN, sender: SENDER_A, nonce, kind: 'transfer', toAddress: '0x00000000000000000000000000000000000000c0', data: '0xabcd',
  gas: 60_000, maxFeePerGas: '2000000000', maxPriorityFeePerGas: '1000000000', rawTx: `0xraw${nonce}`, txHash: hash(nonce, over.sender === SENDER_B ? 2 : 1),
  createdAt: 50 + nonce, ...over,
})

/** The row `insert` should give back: queued, nothing sent or mined yet. */
const queuedRow = (id: number, t: ChainTxInsert): ChainTxRow => ({
  id, ...t, initialTxHash: t.txHash, status: 'queued', reverted: null, blockNumber: null, blockTimestamp: null, contractAddress: null,
  sentAt: null, minedAt: null, lastError: null, stationId: null, checkInId: null, claimId: null,
})

describeStores('chainTxs', ({ store }) => {
  it('inserts an outbox row with its first attempt and reads it back whole', async () => {
    const s = store()
    const t = outboxRow(0, { toAddress: null, kind: 'deploy_phygital' })
    const id = await s.chainTxs.insert(t)
    expect(await s.chainTxs.get(id)).toEqual(queuedRow(id, t))
    expect(await s.chainTxs.get(id + 1000)).toBeUndefined()
    expect(await s.chainTxs.attemptHashes(id)).toEqual([t.txHash])
    expect(await s.chainTxs.attemptRaw(t.txHash)).toBe(t.rawTx)
    expect(await s.chainTxs.attemptRaw(hash(999))).toBeUndefined()
    // (chain, sender, nonce) is one transaction: a second row with the nonce is refused, whatever the engine.
    const error = await s.chainTxs.insert(outboxRow(0, { txHash: hash(77, 9) })).catch((e: unknown) => e)
    expect(isUniqueViolation(error)).toBe(true)
    expect(await s.chainTxs.all(CHAIN)).toHaveLength(1)
  })

  it('records which station watches a transaction, for which check-in or claim, and passes it on', async () => {
    const s = store()
    const teamId = await s.teams.insert({ name: 'Team', redirectUrl: null, now: 1 })
    const door = await s.stations.insert({ teamId, name: 'Door', prefix: 'tgst_d', hash: 'h-d', now: 1 })
    const mint = await s.chainTxs.insert(outboxRow(0, { kind: 'guestbook_mint' }))
    const transfer = await s.chainTxs.insert(outboxRow(1))
    await s.chainTxs.watch(mint, { stationId: door, checkInId: 7, claimId: null })
    await s.chainTxs.watch(transfer, { stationId: door, checkInId: null, claimId: 3 })
    expect(await s.chainTxs.get(mint)).toMatchObject({ stationId: door, checkInId: 7, claimId: null })
    expect(await s.chainTxs.get(transfer)).toMatchObject({ stationId: door, checkInId: null, claimId: 3 })
    // Every list the relayer reads carries the watcher, so a step needs no other lookup.
    expect((await s.chainTxs.withStatus(CHAIN, 'queued', 10)).map((r) => [r.id, r.stationId, r.checkInId, r.claimId])).toEqual([
      [mint, door, 7, null],
      [transfer, door, null, 3],
    ])
    await s.chainTxs.watch(transfer, { stationId: null, checkInId: null, claimId: null })
    expect(await s.chainTxs.get(transfer)).toMatchObject({ stationId: null, checkInId: null, claimId: null })
  })

  it('lists open, all, by status and from a nonce in byte order of sender, then nonce', async () => {
    const s = store()
    const ids: Record<string, number> = {}
    for (const [sender, nonce] of [[SENDER_A, 1], [SENDER_B, 0], [SENDER_A, 0], [SENDER_B, 1], [SENDER_A, 2]] as const) {
      ids[`${sender}:${nonce}`] = await s.chainTxs.insert(outboxRow(nonce, { sender }))
    }
    await s.chainTxs.insert(outboxRow(0, { chainId: 1, txHash: hash(5, 7) }))
    const idsOf = (rows: ChainTxRow[]) => rows.map((r) => r.id)
    const order = [`${SENDER_B}:0`, `${SENDER_B}:1`, `${SENDER_A}:0`, `${SENDER_A}:1`, `${SENDER_A}:2`].map((k) => ids[k]!)
    expect(idsOf(await s.chainTxs.all(CHAIN))).toEqual(order)
    expect(await s.chainTxs.countOpen(CHAIN)).toBe(5)

    expect(await s.chainTxs.markSent(order[1]!, 10, 'gw-1')).toBe(true)
    expect(await s.chainTxs.markSent(order[3]!, 11, 'gw-1')).toBe(true)
    expect(await s.chainTxs.markSent(order[4]!, 12, 'gw-2')).toBe(true)
    expect(await s.chainTxs.markMined(order[4]!, { txHash: hash(2, 1), blockNumber: 5, blockTimestamp: 1_700_000_100, reverted: false, contractAddress: null, now: 20 })).toBe(true)

    expect(idsOf(await s.chainTxs.open(CHAIN))).toEqual(order.slice(0, 4))
    expect(await s.chainTxs.countOpen(CHAIN)).toBe(4)
    expect(idsOf(await s.chainTxs.withStatus(CHAIN, 'queued', 10))).toEqual([order[0], order[2]])
    expect(idsOf(await s.chainTxs.withStatus(CHAIN, 'queued', 1))).toEqual([order[0]])
    expect(idsOf(await s.chainTxs.withStatus(CHAIN, 'sent', 10))).toEqual([order[1], order[3]])
    expect(idsOf(await s.chainTxs.fromNonce(CHAIN, SENDER_A, 1))).toEqual([order[3], order[4]])
    expect(await s.chainTxs.fromNonce(CHAIN, SENDER_A, 3)).toEqual([])
    expect(await s.chainTxs.sentBy(CHAIN)).toEqual(new Map([['gw-1', 2], ['gw-2', 1]]))
    expect(await s.chainTxs.sentBy(1)).toEqual(new Map())
    expect(await s.chainTxs.countOpen(2)).toBe(0)
  })

  it('moves a row queued → sent → mined with conditional updates, replacements recorded as attempts', async () => {
    const s = store()
    const t = outboxRow(0)
    const id = await s.chainTxs.insert(t)
    await s.chainTxs.setError(id, 'x'.repeat(600))
    expect((await s.chainTxs.get(id))?.lastError).toBe('x'.repeat(500))
    expect(await s.chainTxs.requeue(id)).toBe(false)
    expect(await s.chainTxs.markSent(id, 100, 'gw-1')).toBe(true)
    expect(await s.chainTxs.markSent(id, 101, 'gw-2')).toBe(false)
    expect(await s.chainTxs.get(id)).toEqual({ ...queuedRow(id, t), status: 'sent', sentAt: 100 })

    const replacement = { rawTx: '0xreplaced', txHash: hash(1, 5), maxFeePerGas: '4000000000', maxPriorityFeePerGas: '2000000000', now: 150 }
    await s.chainTxs.replace(id, replacement)
    expect(await s.chainTxs.get(id)).toEqual({
      ...queuedRow(id, t), status: 'sent', rawTx: '0xreplaced', txHash: replacement.txHash, maxFeePerGas: '4000000000', maxPriorityFeePerGas: '2000000000', sentAt: 150,
    })
    expect(await s.chainTxs.attemptHashes(id)).toEqual([t.txHash, replacement.txHash])
    expect(await s.chainTxs.attemptRaw(replacement.txHash)).toBe('0xreplaced')

    // Lost by the chain: queued again, sent again keeps the first send time.
    expect(await s.chainTxs.requeue(id)).toBe(true)
    expect(await s.chainTxs.requeue(id)).toBe(false)
    expect((await s.chainTxs.get(id))?.status).toBe('queued')
    expect(await s.chainTxs.markSent(id, 300, 'gw-2')).toBe(true)
    expect((await s.chainTxs.get(id))?.sentAt).toBe(150)

    const receipt = { txHash: t.txHash, blockNumber: 9, blockTimestamp: 1_700_000_009, reverted: true, contractAddress: '0x00000000000000000000000000000000000000d1', now: 400 }
    expect(await s.chainTxs.markMined(id, receipt)).toBe(true)
    expect(await s.chainTxs.markMined(id, { ...receipt, now: 401 })).toBe(false)
    const mined = { ...queuedRow(id, t), status: 'mined', rawTx: '0xreplaced', maxFeePerGas: '4000000000', maxPriorityFeePerGas: '2000000000', sentAt: 150,
      reverted: 1, blockNumber: 9, blockTimestamp: 1_700_000_009, contractAddress: receipt.contractAddress, minedAt: 400 }
    expect(await s.chainTxs.get(id)).toEqual(mined)
    expect(await s.chainTxs.requeue(id)).toBe(false)
    expect(await s.chainTxs.markSent(id, 500, 'gw-1')).toBe(false)

    // A late replacement of a mined row leaves the row alone but keeps the broadcast version as an attempt.
    await s.chainTxs.replace(id, { ...replacement, txHash: hash(2, 5), rawTx: '0xlate', now: 600 })
    expect(await s.chainTxs.get(id)).toEqual(mined)
    expect(await s.chainTxs.attemptHashes(id)).toEqual([t.txHash, replacement.txHash, hash(2, 5)])
    // A not reverted receipt reads 0.
    const other = await s.chainTxs.insert(outboxRow(1))
    await s.chainTxs.markMined(other, { ...receipt, txHash: hash(1, 1), reverted: false, contractAddress: null })
    expect((await s.chainTxs.get(other))?.reverted).toBe(0)
  })

  it('allocates, raises and peeks relayer nonces', async () => {
    const s = store()
    expect(await s.chainTxs.peekNonce(CHAIN, SENDER_A)).toBe(0)
    expect(await s.chainTxs.allocateNonce(CHAIN, SENDER_A)).toBe(0)
    expect(await s.chainTxs.allocateNonce(CHAIN, SENDER_A)).toBe(1)
    expect(await s.chainTxs.peekNonce(CHAIN, SENDER_A)).toBe(2)
    // A floor below the counter changes nothing; above it, the chain knows of more.
    expect(await s.chainTxs.allocateNonce(CHAIN, SENDER_A, 1)).toBe(2)
    expect(await s.chainTxs.allocateNonce(CHAIN, SENDER_A, 10)).toBe(10)
    await s.chainTxs.raiseNonce(CHAIN, SENDER_A, 5)
    expect(await s.chainTxs.peekNonce(CHAIN, SENDER_A)).toBe(11)
    await s.chainTxs.raiseNonce(CHAIN, SENDER_A, 20)
    expect(await s.chainTxs.peekNonce(CHAIN, SENDER_A)).toBe(20)
    // A new sender starts at its floor.
    expect(await s.chainTxs.allocateNonce(CHAIN, SENDER_B, 7)).toBe(7)
    await s.chainTxs.raiseNonce(1, SENDER_B, 3)
    expect(await s.chainTxs.peekNonce(1, SENDER_B)).toBe(3)
    expect(await s.chainTxs.peekNonce(CHAIN, SENDER_B)).toBe(8)
  })

  it('keeps the last head and the token nonces', async () => {
    const s = store()
    expect(await s.chainTxs.getHead(CHAIN)).toBeUndefined()
    const head = { chainId: CHAIN, blockNumber: 12, maxFeePerGas: '3', maxPriorityFeePerGas: '1', updatedAt: 1_700_000_000_000 }
    await s.chainTxs.setHead(head)
    expect(await s.chainTxs.getHead(CHAIN)).toEqual(head)
    await s.chainTxs.setHead({ ...head, blockNumber: 13, maxFeePerGas: '4', updatedAt: 1_700_000_000_500 })
    expect(await s.chainTxs.getHead(CHAIN)).toEqual({ ...head, blockNumber: 13, maxFeePerGas: '4', updatedAt: 1_700_000_000_500 })

    const contract = '0x00000000000000000000000000000000000000c0'
    expect(await s.chainTxs.allocateTokenNonce(CHAIN, contract, '1')).toBe(0)
    expect(await s.chainTxs.allocateTokenNonce(CHAIN, contract, '1')).toBe(1)
    expect(await s.chainTxs.allocateTokenNonce(CHAIN, contract, '1', 5)).toBe(5)
    expect(await s.chainTxs.allocateTokenNonce(CHAIN, contract, '1', 2)).toBe(6)
    expect(await s.chainTxs.allocateTokenNonce(CHAIN, contract, '2', 3)).toBe(3)
    await s.chainTxs.setTokenNonce(CHAIN, contract, '1', 2)
    expect(await s.chainTxs.allocateTokenNonce(CHAIN, contract, '1')).toBe(2)
    await s.chainTxs.setTokenNonce(CHAIN, contract, '3', 9)
    expect(await s.chainTxs.allocateTokenNonce(CHAIN, contract, '3')).toBe(9)
  })

  const racers = 20
  const readCommitted = { isolation: 'read committed' } as const

  it(`marks a queued row sent for one of ${racers} relayers, mined once, requeued once`, async () => {
    const s = store()
    const id = await s.chainTxs.insert(outboxRow(0))
    const race = (fn: (i: number) => Promise<boolean>) => Promise.all(Array.from({ length: racers }, (_, i) => fn(i)))
    const sent = await race((i) => s.tx((tx) => tx.chainTxs.markSent(id, 100 + i, `gw-${i}`), readCommitted))
    expect(sent.filter(Boolean)).toHaveLength(1)
    const winner = sent.indexOf(true)
    expect(await s.chainTxs.sentBy(CHAIN)).toEqual(new Map([[`gw-${winner}`, 1]]))
    expect((await s.chainTxs.get(id))?.sentAt).toBe(100 + winner)

    const requeued = await race(() => s.tx((tx) => tx.chainTxs.requeue(id), readCommitted))
    expect(requeued.filter(Boolean)).toHaveLength(1)

    const receipt = { txHash: hash(0, 1), blockNumber: 3, blockTimestamp: 4, reverted: false, contractAddress: null }
    const mined = await race((i) => s.tx((tx) => tx.chainTxs.markMined(id, { ...receipt, now: 1000 + i }), readCommitted))
    expect(mined.filter(Boolean)).toHaveLength(1)
    expect((await s.chainTxs.get(id))?.minedAt).toBe(1000 + mined.indexOf(true))
  })

  for (const isolation of ['read committed', 'serializable'] as const) {
    it(`never reuses nor skips a relayer nonce: ${racers} racing queuers, every third rolled back (${isolation})`, async () => {
      const s = store()
      await s.chainTxs.allocateNonce(CHAIN, SENDER_A, 4)
      const outcomes = await Promise.allSettled(
        Array.from({ length: racers }, (_, i) =>
          s.tx(async (tx) => {
            const nonce = await tx.chainTxs.allocateNonce(CHAIN, SENDER_A)
            await tx.chainTxs.insert(outboxRow(nonce, { txHash: hash(i, 3) }))
            if (i % 3 === 0) throw new Error('the queuer failed after its nonce')
            return nonce
          }, { isolation }),
        ),
      )
      const committed = outcomes.filter((o) => o.status === 'fulfilled')
      const refused = outcomes.filter((o) => o.status === 'rejected')
      expect(refused.map((o) => (o.reason as Error).message)).toEqual(Array(7).fill('the queuer failed after its nonce'))
      expect(committed).toHaveLength(racers - 7)
      const nonces = (await s.chainTxs.fromNonce(CHAIN, SENDER_A, 0)).map((r) => r.nonce)
      // Nonce 4 was allocated before the race without a row; the racers' committed rows follow it with no gap.
      expect(nonces).toEqual(Array.from({ length: racers - 7 }, (_, k) => 5 + k))
      expect(committed.map((o) => o.value).sort((a, b) => a - b)).toEqual(nonces)
      expect(await s.chainTxs.peekNonce(CHAIN, SENDER_A)).toBe(5 + racers - 7)
    })
  }

  it(`hands out ${racers} distinct token nonces to racing transfers`, async () => {
    const s = store()
    const got = await Promise.all(
      Array.from({ length: racers }, () => s.tx((tx) => tx.chainTxs.allocateTokenNonce(CHAIN, '0xc0', '7', 0), readCommitted)),
    )
    expect([...got].sort((a, b) => a - b)).toEqual(Array.from({ length: racers }, (_, k) => k))
  })
})
