/**
 * The hosted endpoints through the bin: a real `tapgate serve` on a seeded data dir, over loopback,
 * as an app written for the hosted API calls them (issue 26).
 */
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import { afterAll, expect, test } from 'vitest'
import { CONTRACT, createTestGateway, metadata, seedSunChip, seedSunProfile, seedTeam, sunTapUrl } from '../helpers/gateway.js'
import { cliPath, startServe, stopChild } from '../helpers/processes.js'

const META = '5ACE7E50AB65D5D51FD5BF5A16B8205B'
const FILE = '97D1F3FCC8A6B3A4F1AE6F1E3B4BD5A0'
const UID = '04A30000000001'

const children: ChildProcess[] = []
const dirs: string[] = []
afterAll(async () => {
  for (const child of children) await stopChild(child)
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

test('through the bin: PATCH /chips, a tap redirected there, /chips/find fresh then replayed, the ref, the items', { timeout: 60_000 }, async () => {
  const gw = await createTestGateway()
  dirs.push(gw.dataDir)
  const { teamId, apiKey } = await seedTeam(gw, {
    name: 'A',
    chips: [{ uid: UID }],
    tokens: [{ chainId: 31337, contractAddress: CONTRACT, tokenId: '3', chips: [UID], metadata: metadata({ name: 'Hoodie' }) }],
  })
  await seedSunProfile(gw, { teamId, name: 'aes', metaKey: META, fileKey: FILE })
  await seedSunChip(gw, { teamId, uid: UID, profileName: 'aes' })
  const dataDir = gw.dataDir
  await gw.app.close()
  await gw.store.close()

  const server = await startServe({
    cwd: dataDir,
    env: { TAPGATE_DATA_DIR: dataDir, PORT: '0', TAPGATE_LOG_LEVEL: 'warn' },
    command: [process.execPath, cliPath, 'serve', '--no-demo'],
    track: (child) => children.push(child),
  })
  const json = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${server.url}${path}`, { ...init, redirect: 'manual' })
    return { status: res.status, headers: res.headers, body: (res.headers.get('content-type') ?? '').includes('json') ? await res.json() : await res.text() }
  }
  const headers = { 'x-service-api-key': apiKey, 'content-type': 'application/json' }

  const patched = await json('/chips', { method: 'PATCH', headers, body: JSON.stringify({ tagUIDs: [UID], updates: { redirectUrl: 'https://app.example/t' } }) })
  expect(patched).toMatchObject({ status: 200, body: { success: true, updated: 1 } })
  const tap = await json(sunTapUrl({ metaKey: META, fileKey: FILE, uid: UID, counter: 1 }))
  expect(tap.status).toBe(302)
  expect(tap.headers.get('location')).toMatch(/^https:\/\/app\.example\/t\?serviceRef=/)

  const query = `${sunTapUrl({ metaKey: META, fileKey: FILE, uid: UID, counter: 2, base: '' })}&d=101`
  const found = await json(`/chips/find${query}`)
  expect(found.body).toMatchObject({ uid: UID, isValidTap: true, linkedToken: { contractAddress: CONTRACT, chainId: 31337, tokenId: '3' } })
  const ref = await json(`/refs/${(found.body as { ref: string }).ref}`)
  expect(ref.body).toMatchObject({ uid: UID, isValidRef: true, linkedToken: { tokenId: '3', otp: expect.any(String) } })
  expect((await json(`/chips/find${query}`)).body).toMatchObject({ uid: UID, isValidTap: false })
  expect((await json(`/chips/find${query.replace(/c=[0-9A-F]{16}/, 'c=0000000000000000')}`)).body).toMatchObject({ success: false, error: 'tap_refused' })

  const items = await json('/items', { headers })
  expect(items.body).toMatchObject([{ name: 'Hoodie', contract: { address: CONTRACT, chainId: 31337 }, tokenId: '3' }])
  expect((await json(`/items/${(items.body as { id: number }[])[0]!.id}/chips`, { headers })).body).toEqual([{ uid: UID, linkedToken: { contractAddress: CONTRACT, chainId: 31337, tokenId: '3' } }])
  const openapi = await json('/openapi.json')
  const tagged = Object.entries((openapi.body as { paths: unknown }).paths as Record<string, Record<string, { tags?: string[] }>>).flatMap(([path, ops]) =>
    Object.entries(ops).filter(([, op]) => op.tags?.includes('hosted API compatibility')).map(([method]) => `${method} ${path}`),
  )
  expect(tagged.sort()).toEqual(['get /chips/find', 'get /items', 'get /items/{id}', 'get /items/{id}/chips', 'patch /chips', 'post /poap-events/mint'])
})
