import { expect, it } from 'vitest'
import { describeStores } from '../helpers/stores.js'
import { insertChainTx, insertTeam } from './seedRows.js'

const RACERS = 20
const PLANNED = '0x00000000000000000000000000000000000000d1'
const DEPLOYED = '0x00000000000000000000000000000000000000d2'
const CHIP = '04B1000000000A'

describeStores('guestbook', ({ store }) => {
  const seedTeam = () => insertTeam(store(), [CHIP])
  const seedPending = async (teamId: number) => {
    const deployTxId = await insertChainTx(store())
    const id = await store().guestbook.insertContract({ teamId, name: 'Book', symbol: 'GB', chainId: 31337, address: null, now: 10, plannedAddress: PLANNED, deployTxId })
    return { id, deployTxId }
  }

  it('stores pending and confirmed contracts with 0/1 flags and finds them by id, address, planned address and name', async () => {
    const teamId = await seedTeam()
    const { id, deployTxId } = await seedPending(teamId)
    const confirmed = await store().guestbook.insertContract({ teamId, name: 'Book', symbol: 'GB2', chainId: 31337, address: DEPLOYED, now: 20 })
    const pendingRow = { id, teamId, name: 'Book', symbol: 'GB', chainId: 31337, address: null, status: 'pending', paused: 0, createdAt: 10, plannedAddress: PLANNED, deployTxId }
    const confirmedRow = { id: confirmed, teamId, name: 'Book', symbol: 'GB2', chainId: 31337, address: DEPLOYED, status: 'confirmed', paused: 0, createdAt: 20, plannedAddress: null, deployTxId: null }
    expect(await store().guestbook.getContract(id)).toEqual(pendingRow)
    expect(await store().guestbook.getContract(confirmed)).toEqual(confirmedRow)
    expect(await store().guestbook.getContract(confirmed + 100)).toBeUndefined()
    expect(await store().guestbook.findContractByAddress(31337, PLANNED)).toEqual(pendingRow)
    expect(await store().guestbook.findContractByAddress(31337, DEPLOYED)).toEqual(confirmedRow)
    expect(await store().guestbook.findContractByAddress(1, DEPLOYED)).toBeUndefined()
    expect(await store().guestbook.findContractByName(teamId, 'Book', 31337)).toEqual(pendingRow)
    expect(await store().guestbook.findContractByName(teamId, 'Book', 1)).toBeUndefined()
    expect(await store().guestbook.listContracts(teamId)).toEqual([pendingRow, confirmedRow])
    expect(await store().guestbook.listContracts(teamId + 1)).toEqual([])
  })

  it('confirms a contract once, at the given or the planned address, and pauses it', async () => {
    const teamId = await seedTeam()
    const a = await seedPending(teamId)
    const b = await store().guestbook.insertContract({ teamId, name: 'Other', symbol: 'O', chainId: 31337, address: null, now: 11 })
    expect(await store().guestbook.confirmDeployed(a.deployTxId)).toBe(a.id)
    expect(await store().guestbook.confirmDeployed(a.deployTxId)).toBeUndefined()
    expect(await store().guestbook.getContract(a.id)).toMatchObject({ address: PLANNED, status: 'confirmed' })
    // Once deployed, the planned address is the address: a pending lookup no longer needs it.
    expect((await store().guestbook.findContractByAddress(31337, PLANNED))?.id).toBe(a.id)
    expect(await store().guestbook.confirmContract(b, DEPLOYED)).toBe(true)
    expect(await store().guestbook.confirmContract(b, '0x01')).toBe(false)
    expect(await store().guestbook.getContract(b)).toMatchObject({ address: DEPLOYED, status: 'confirmed' })
    await store().guestbook.setPaused(b, true)
    expect((await store().guestbook.getContract(b))?.paused).toBe(1)
    await store().guestbook.setPaused(b, false)
    expect((await store().guestbook.getContract(b))?.paused).toBe(0)
  })

  it('stores events with their contract\'s chain and address and finds them every way', async () => {
    const teamId = await seedTeam()
    const pending = await seedPending(teamId)
    const confirmed = await store().guestbook.insertContract({ teamId, name: 'Live', symbol: 'L', chainId: 31337, address: DEPLOYED, now: 20 })
    const e1 = await store().guestbook.insertEvent({ teamId, contractId: confirmed, name: 'Day 1', tokenId: '1', metadata: '{"a":1}', now: 30 })
    const e2 = await store().guestbook.insertEvent({ teamId, contractId: pending.id, name: 'Day 2', tokenId: '1', metadata: '{"b":2}', now: 31 })
    const row1 = { id: e1, teamId, contractId: confirmed, name: 'Day 1', tokenId: '1', metadata: '{"a":1}', createdAt: 30, updatedAt: 30, chainId: 31337, contractAddress: DEPLOYED, reentry: 1, publicNames: 'first' as const, admitUnpaid: 0 }
    const row2 = { id: e2, teamId, contractId: pending.id, name: 'Day 2', tokenId: '1', metadata: '{"b":2}', createdAt: 31, updatedAt: 31, chainId: 31337, contractAddress: null, reentry: 1, publicNames: 'first' as const, admitUnpaid: 0 }
    expect(await store().guestbook.getEvent(e1)).toEqual(row1)
    expect(await store().guestbook.getEvent(e2 + 100)).toBeUndefined()
    expect(await store().guestbook.findEventByToken(31337, DEPLOYED, '1')).toEqual(row1)
    expect(await store().guestbook.findEventByToken(31337, PLANNED, '1')).toBeUndefined()
    expect(await store().guestbook.findEventByTokenOrPlanned(31337, PLANNED, '1')).toEqual(row2)
    expect(await store().guestbook.findEventByTokenOrPlanned(31337, DEPLOYED, '2')).toBeUndefined()
    expect(await store().guestbook.findEventInContract(pending.id, '1')).toEqual(row2)
    expect(await store().guestbook.findEventInContract(pending.id, '2')).toBeUndefined()
    expect(await store().guestbook.listEvents(teamId)).toEqual([row1, row2])
    expect(await store().guestbook.listEvents(teamId, pending.id)).toEqual([row2])
    expect(await store().guestbook.listEvents(teamId + 1)).toEqual([])

    await store().guestbook.updateEvent(e1, { name: 'Day one', metadata: '{"a":3}', now: 40 })
    expect(await store().guestbook.getEvent(e1)).toEqual({ ...row1, name: 'Day one', metadata: '{"a":3}', updatedAt: 40 })
    await store().guestbook.setEventMetadata(e2, '{"b":4}', 41)
    expect(await store().guestbook.getEvent(e2)).toEqual({ ...row2, metadata: '{"b":4}', updatedAt: 41 })
    // The door settings (issue 19): each one alone, the other kept.
    await store().guestbook.setDoorSettings(e2, { reentry: false, now: 42 })
    expect(await store().guestbook.getEvent(e2)).toEqual({ ...row2, metadata: '{"b":4}', updatedAt: 42, reentry: 0 })
    await store().guestbook.setDoorSettings(e2, { publicNames: 'full', now: 43 })
    expect(await store().guestbook.getEvent(e2)).toEqual({ ...row2, metadata: '{"b":4}', updatedAt: 43, reentry: 0, publicNames: 'full' })
    await store().guestbook.setDoorSettings(e2, { reentry: true, now: 44 })
    expect((await store().guestbook.getEvent(e2))!.reentry).toBe(1)
    // Issue 25: unpaid guests let in, the other settings kept.
    await store().guestbook.setDoorSettings(e2, { admitUnpaid: true, now: 45 })
    expect(await store().guestbook.getEvent(e2)).toEqual({ ...row2, metadata: '{"b":4}', updatedAt: 45, reentry: 1, publicNames: 'full', admitUnpaid: 1 })
  })

  it('assigns a chip to events once each and lists them by chip', async () => {
    const teamId = await seedTeam()
    const { id: contractId } = await seedPending(teamId)
    const e1 = await store().guestbook.insertEvent({ teamId, contractId, name: 'A', tokenId: '1', metadata: '{}', now: 30 })
    const e2 = await store().guestbook.insertEvent({ teamId, contractId, name: 'B', tokenId: '2', metadata: '{}', now: 31 })
    expect(await store().guestbook.listEventsByChip(CHIP)).toEqual([])
    await store().guestbook.assignChip(e2, CHIP, 50)
    await store().guestbook.assignChip(e1, CHIP, 51)
    await store().guestbook.assignChip(e1, CHIP, 52)
    expect((await store().guestbook.listEventsByChip(CHIP)).map((e) => e.id)).toEqual([e1, e2])
  })

  it(`confirms a deploy for one of ${RACERS} concurrent receipts`, async () => {
    const teamId = await seedTeam()
    const { id, deployTxId } = await seedPending(teamId)
    const confirmed = await Promise.all(
      Array.from({ length: RACERS }, () => store().tx((tx) => tx.guestbook.confirmDeployed(deployTxId), { isolation: 'read committed' })),
    )
    expect(confirmed.filter((c) => c !== undefined)).toEqual([id])
  })

  it(`records one address when ${RACERS} confirmations race`, async () => {
    const teamId = await seedTeam()
    const id = await store().guestbook.insertContract({ teamId, name: 'Other', symbol: 'O', chainId: 31337, address: null, now: 11 })
    const addresses = Array.from({ length: RACERS }, (_, i) => `0x${String(i + 1).padStart(40, '0')}`)
    const won = await Promise.all(
      addresses.map((address) => store().tx((tx) => tx.guestbook.confirmContract(id, address), { isolation: 'read committed' })),
    )
    expect(won.filter(Boolean)).toHaveLength(1)
    expect((await store().guestbook.getContract(id))?.address).toBe(addresses[won.indexOf(true)])
  })
})
