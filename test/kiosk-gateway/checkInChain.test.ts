import { afterAll, beforeAll, expect, test } from 'vitest'
import { setChipWallet } from '../../src/kiosk/chipWallet.js'
import { setStaffPin } from '../../src/kiosk/staffAuth.js'
import type { TxEventData } from '../../src/wire/feedProtocol.js'
import type { PostgresStore, SqliteStore } from '../../src/db/store.js'
import { type ChainGateway, createBackendChainGateway, OTHER } from '../helpers/chainGateway.js'
import { call } from '../helpers/gateway.js'
import { seedCheckInTeam, stationTap, UIDS, WALLET } from './kioskFixture.js'

// Issue 10: a check-in's guestbook mint on the embedded chain, followed in the station's feed
// (queued → sent → confirmed), and a failed one retried by staff.

let gw: ChainGateway<SqliteStore | PostgresStore>
let s: Awaited<ReturnType<typeof seedCheckInTeam>>
beforeAll(async () => {
  gw = await createBackendChainGateway()
  s = await seedCheckInTeam({ ...gw, clock: { now: Date.now() } })
  await gw.settle()
}, 60_000)
afterAll(async () => gw?.close())

const txRows = async (txId: number): Promise<TxEventData[]> =>
  (await gw.store.stationEvents.after(s.door.stationId, 0)).flatMap((e) => (e.kind === 'tx' && e.data.txId === txId ? [e.data] : []))

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

test('the mint of a check-in goes queued → sent → confirmed in the feed; the token is in the wallet', async () => {
  const res = await stationTap(gw, s.door.token, UIDS[0]!, 1)
  const { id: txId, hash } = res.body.checkIn.checkIn.tx
  await until(async () => (await txRows(txId)).some((r) => r.status === 'confirmed'))
  const rows = await txRows(txId)
  expect(rows.map((r) => r.status)).toEqual(['queued', 'sent', 'confirmed'])
  expect(rows.every((r) => r.hash === hash && r.checkInId === res.body.checkIn.checkIn.id)).toBe(true)
  const mined = (await gw.store.chainTxs.get(txId))!
  expect(mined).toMatchObject({ status: 'mined', reverted: 0 })
  const receipt = await gw.publicClient.getTransactionReceipt({ hash })
  expect(receipt.status).toBe('success')
  const balance = await gw.publicClient.readContract({
    address: mined.toAddress as `0x${string}`,
    abi: [{ type: 'function', name: 'balanceOf', stateMutability: 'view', inputs: [{ type: 'address' }, { type: 'uint256' }], outputs: [{ type: 'uint256' }] }],
    functionName: 'balanceOf',
    args: [WALLET, 1n],
  })
  expect(balance).toBe(1n)
  // A later tap sees the confirmed mint in its summary.
  const again = await stationTap(gw, s.side.token, UIDS[0]!, 2)
  expect(again.body.checkIn).toMatchObject({ state: 'already', checkIn: { tx: { id: txId, status: 'confirmed', hash } } })
}, 30_000)

test('a mint that reverts is "failed" in the feed; staff retry queues it again and it confirms', async () => {
  // The guestbook itself cannot receive ERC-1155 tokens: the mint to it reverts.
  const guestbook = (await gw.store.guestbook.getContract((await gw.store.guestbook.getEvent(s.eventId))!.contractId))!.address!
  await setChipWallet(gw.store, { uid: UIDS[1]!, teamId: s.teamId, wallet: guestbook })
  const res = await stationTap(gw, s.door.token, UIDS[1]!, 1)
  const failedTx = res.body.checkIn.checkIn.tx.id as number
  await until(async () => (await txRows(failedTx)).some((r) => r.status === 'failed'))
  expect((await txRows(failedTx)).map((r) => r.status)).toEqual(['queued', 'sent', 'failed'])
  // Still checked in; the reverted mint gave back what it used.
  expect(await gw.store.checkIns.findActive(s.eventId, UIDS[1]!)).toMatchObject({ mintId: null, chainTxId: failedTx, undoneAt: null })

  await setStaffPin(gw.store, { stationId: s.door.stationId, pin: '1357', now: Date.now() })
  const login = await call(gw, { method: 'POST', url: '/kiosk/staff/session', headers: { 'x-kiosk-token': s.kiosk }, payload: { pin: '1357' } })
  const headers = { 'x-kiosk-token': s.kiosk, 'x-staff-session': login.body.session as string }
  await setChipWallet(gw.store, { uid: UIDS[1]!, teamId: s.teamId, wallet: OTHER })
  const retry = await call(gw, { method: 'POST', url: '/kiosk/staff/retry', headers, payload: { txId: failedTx } })
  expect(retry).toMatchObject({ status: 200, body: { success: true, txId: expect.any(Number), txnHash: expect.stringMatching(/^0x/) } })
  const newTx = retry.body.txId as number
  expect(newTx).not.toBe(failedTx)
  await until(async () => (await txRows(newTx)).some((r) => r.status === 'confirmed'))
  expect((await txRows(newTx)).map((r) => r.status)).toEqual(['queued', 'sent', 'confirmed'])
  // Retrying it again: it has not failed.
  expect(await call(gw, { method: 'POST', url: '/kiosk/staff/retry', headers, payload: { txId: failedTx } })).toMatchObject({ status: 404, body: { error: 'tx_not_found' } })
  const state = await call(gw, { url: '/kiosk/staff/state', headers })
  expect(state.body.health).toMatchObject({ chains: [{ chainId: 31337, reachable: true }], outboxPending: 0 })
}, 40_000)
