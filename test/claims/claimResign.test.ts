import { afterAll, beforeAll, expect, test } from 'vitest'
import type { PostgresStore, SqliteStore } from '../../src/db/store.js'
import type { StationEvent } from '../../src/wire/feedProtocol.js'
import { type ChainGateway, createBackendChainGateway, holdRelayer, OTHER } from '../helpers/chainGateway.js'
import { type ClaimStation, MUG, setUpClaimStation } from '../helpers/claimStation.js'
import { until } from '../helpers/until.js'

let gw: ChainGateway<SqliteStore | PostgresStore>
let shop: ClaimStation

beforeAll(async () => {
  // Relayed signatures valid 20 blocks past the head: a held relayer lets one expire (the re-sign case left by issue 24 §1).
  // A slow poll keeps the relayer's recorded head behind the mined blocks: the re-sign must read the chain's own.
  gw = await createBackendChainGateway({ config: { chain: { relayedSignatureBlocks: 20, pollIntervalMs: 5000 } } })
  shop = await setUpClaimStation(gw, { listen: false })
}, 60_000)
afterAll(async () => {
  await gw?.close()
})

/*
 * The outbox row names the station that watches it (migration 014): the relayer writes a step's feed
 * row from that row alone. A claim's transfer that reverted and was re-signed is a new transaction,
 * which only the re-sign knows belongs to the claim: the kiosk must follow it to "confirmed".
 */
test("a claim's transfer re-signed after a revert: the kiosk follows the new transaction to confirmed, and the claim points at it", async () => {
  // The claim's mintNFT is queued while the relayer is held, and its signature expires meanwhile
  // (blocks mined past its blockExpiry): once sent it reverts with SignatureExpired. Nothing moved
  // outside the gateway, so the transfer is re-signed (a move it did not make would give it up:
  // test/tokens/tokenMoves.test.ts).
  expect((await shop.tap(MUG, 1)).status).toBe(200)
  const claimId = await shop.lastClaimId()
  const held = await holdRelayer(gw)
  const sent = await shop.kiosk(`/kiosk/claims/${claimId}/recipient`, { recipient: OTHER })
  expect(sent, JSON.stringify(sent.body)).toMatchObject({ status: 200, body: { claim: { step: 'claimed' } } })
  await gw.testClient.mine({ blocks: 30 })
  await held.release()
  const first = (await gw.store.claims.get(claimId))!.chainTxId!
  const transferId = (await gw.store.claims.get(claimId))!.transferId!

  const current = await until('the transfer is re-signed and its new transaction mined', async () => {
    const transfer = (await gw.store.transfers.get(transferId))!
    const row = transfer.resigned >= 1 ? await gw.store.chainTxs.get(transfer.chainTxId) : undefined
    return row?.status === 'mined' && row.reverted === 0 ? row : undefined
  })
  await gw.settle()
  // Once: signed against the chain's head, not the relayer's older one, the new transaction does not expire in turn.
  expect((await gw.store.transfers.get(transferId))!.resigned).toBe(1)
  expect(current.id).not.toBe(first)
  expect(current).toMatchObject({ reverted: 0, stationId: shop.stationId, claimId, checkInId: null })
  expect((await gw.store.claims.get(claimId))!.chainTxId).toBe(current.id)

  const steps = (await gw.store.stationEvents.after(shop.stationId, 0)).flatMap((e: StationEvent) =>
    e.kind === 'tx' && e.data.claimId === claimId ? [[e.data.txId, e.data.status]] : [],
  )
  expect(steps[0]).toEqual([first, 'queued'])
  // The reverted one is not shown as failed (it was redone); the new one is followed to the end.
  expect(steps).not.toContainEqual([first, 'failed'])
  expect(steps).toContainEqual([current.id, 'sent'])
  expect(steps.at(-1)).toEqual([current.id, 'confirmed'])
})
