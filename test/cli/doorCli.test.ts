import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { expect, test } from 'vitest'
import { ConfigSchema } from '../../src/config.js'
import { openStore } from '../../src/db/store.js'
import { importData, parseImportFile } from '../../src/importer/importData.js'
import { loadGatewaySecret } from '../../src/keys/gatewaySecret.js'
import { createStation } from '../../src/stations/stations.js'
import { metadata, testDir } from '../helpers/gateway.js'
import { cliPath, repoRoot } from '../helpers/processes.js'

// Issue 19's CLI, as users run it (the bin on a temp data dir): a station as a bind or exit door or a
// door for some ticket types, and an event's door settings.

const env = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(PORT|HOST|TAPGATE_)/.test(name))), TAPGATE_STATION: 'false' }

async function cli(args: string[], dataDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [cliPath, ...args], { cwd: repoRoot, env: { ...env, TAPGATE_DATA_DIR: dataDir } })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

async function seeded() {
  const dataDir = testDir('tapgate-door-cli-')
  const store = openStore({ dataDir })
  try {
    const config = ConfigSchema.parse({ logLevel: 'silent', dataDir })
    const team = { name: 'Venue', guestbookContracts: [{ name: 'Guests', symbol: 'GST', chainId: 31337, events: [{ name: 'Opening', tokenId: '1', metadata: metadata() }] }] }
    const summary = await importData(store, parseImportFile({ teams: [team] }), { config, now: Date.now(), secret: loadGatewaySecret({ dataDir }) })
    const teamId = summary.teams[0]!.id
    const station = await store.tx((tx) => createStation(tx, { teamId, name: 'Door A', now: Date.now() }))
    return { dataDir, stationId: station.stationId, eventId: (await store.guestbook.listEvents(teamId))[0]!.id }
  } finally {
    await store.close()
  }
}

test('station set --mode bind|exit --event ID [--ticket-types]; event set --reentry --public-names; bad input exits 2 or 1', async () => {
  const { dataDir, stationId, eventId } = await seeded()
  const station = ['station', 'set', '--station', String(stationId)]
  const vip = await cli([...station, '--mode', 'checkin', '--event', String(eventId), '--ticket-types', 'VIP, Press,VIP'], dataDir)
  expect(vip.code).toBe(0)
  expect(JSON.parse(vip.stdout)).toEqual({ stationId, name: 'Door A', mode: 'checkin', eventId, ticketTypes: ['VIP', 'Press'] })
  expect(JSON.parse((await cli([...station, '--mode', 'bind', '--event', String(eventId)], dataDir)).stdout)).toEqual({ stationId, name: 'Door A', mode: 'bind', eventId, ticketTypes: ['VIP', 'Press'] })
  expect(JSON.parse((await cli([...station, '--mode', 'exit', '--event', String(eventId), '--ticket-types', 'all'], dataDir)).stdout)).toEqual({ stationId, name: 'Door A', mode: 'exit', eventId })
  const noEvent = await cli([...station, '--mode', 'bind'], dataDir)
  expect(noEvent).toMatchObject({ code: 2, stderr: expect.stringContaining('--mode bind needs --event') })
  expect(await cli([...station, '--mode', 'claim', '--ticket-types', 'VIP'], dataDir)).toMatchObject({ code: 2, stderr: expect.stringContaining('--ticket-types is for a door') })
  expect(await cli([...station, '--mode', 'checkin', '--event', String(eventId), '--ticket-types', ' , '], dataDir)).toMatchObject({ code: 2 })

  const event = ['event', 'set', '--event', String(eventId)]
  expect(JSON.parse((await cli([...event, '--reentry', 'no'], dataDir)).stdout)).toEqual({ eventId, name: 'Opening', reentry: false, publicNames: 'first', admitUnpaid: false })
  expect(JSON.parse((await cli([...event, '--public-names', 'full'], dataDir)).stdout)).toEqual({ eventId, name: 'Opening', reentry: false, publicNames: 'full', admitUnpaid: false })
  expect(JSON.parse((await cli([...event, '--admit-unpaid', 'yes'], dataDir)).stdout)).toEqual({ eventId, name: 'Opening', reentry: false, publicNames: 'full', admitUnpaid: true })
  expect(await cli([...event, '--admit-unpaid', 'sometimes'], dataDir)).toMatchObject({ code: 2, stderr: expect.stringContaining('--admit-unpaid takes yes or no') })
  expect(await cli([...event, '--reentry', 'maybe'], dataDir)).toMatchObject({ code: 2, stderr: expect.stringContaining('--reentry takes yes or no') })
  expect(await cli([...event], dataDir)).toMatchObject({ code: 2 })
  expect(await cli(['event', 'set', '--event', '77', '--reentry', 'yes'], dataDir)).toMatchObject({ code: 1, stderr: expect.stringContaining('No guestbook event 77') })
  const store = openStore({ dataDir })
  try {
    expect(await store.guestbook.getEvent(eventId)).toMatchObject({ reentry: 0, publicNames: 'full', admitUnpaid: 1 })
  } finally {
    await store.close()
  }
}, 60_000)
