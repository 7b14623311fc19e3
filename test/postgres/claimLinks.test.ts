// Issue 18, a claim station's phone link on two gateways sharing one PostgreSQL database: the link is
// single use across gateways, not only inside one (test/claims/claimStation.test.ts proves it for one
// gateway on SQLite). The shop is set up with the bin's CLI on the same database, as README's
// "Running a claim station in a shop" says; the hoodie of the demo team is the product.
import { type Address, createPublicClient, getAddress, http, keccak256, toHex } from 'viem'
import { describe, expect, test } from 'vitest'
import { phygitalTokenAbi } from '../../contracts/artifacts/PhygitalToken.js'
import { sunTapUrl } from '../helpers/gateway.js'
import { twoGatewaysOnPostgres } from '../helpers/pgDeployment.js'
import { HAS_POSTGRES, testDatabase } from '../helpers/postgres.js'
import type { Server } from '../helpers/processes.js'
import { until } from '../helpers/until.js'

/** The demo hoodie's chip (fixtures/demo.json, factory keys) and its token. */
const HOODIE_CHIP = '04DE5F1EACC040'
const HOODIE_TOKEN = 1n
const ZERO_KEY = '00000000000000000000000000000000'
const SUBMISSIONS = 200
/** A different address per submission (no code on chain: each one could receive the token). */
const RECIPIENTS: Address[] = Array.from({ length: SUBMISSIONS }, (_, i) => getAddress(keccak256(toHex(`claim link racer ${i}`)).slice(0, 42)))

type Answer = { status: number; body: { success: boolean; error?: string; session?: string; claim?: { step: string; tx: { status: string } | null } } }

const describePg = describe.skipIf(!HAS_POSTGRES)

describePg('a claim link on two gateways on one PostgreSQL database', () => {
  const db = testDatabase()
  // /c/* counts in rateLimit.max's buckets (test/routes/claimLinksRateLimit.test.ts): far above the burst.
  const gw = twoGatewaysOnPostgres(db, { config: { rateLimit: { max: 100_000 } } })

  const post = async (server: Server, url: string, payload: object, headers: Record<string, string> = {}): Promise<Answer> => {
    const res = await fetch(`${server.url}${url}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(payload) })
    return { status: res.status, body: (await res.json()) as Answer['body'] }
  }

  test(`${SUBMISSIONS} racing submissions of one link's address, each to another address, across both gateways: one transfer, one chain tx, the rest 409 claim_link_used`, async () => {
    // The shop: a station in claim mode for the demo team, its kiosk token (README steps 2–3).
    const { stationId, token: stationToken } = await gw.cliJson<{ stationId: number; token: string }>('station', 'create', '--team', String(gw.teamId), '--name', 'Shop counter')
    expect(await gw.cliJson('station', 'set', '--station', String(stationId), '--mode', 'claim')).toMatchObject({ stationId, mode: 'claim' })
    const kioskUrl = (await gw.cli('station', 'kiosk-url', '--station', String(stationId), '--base-url', gw.b.url)).trim()
    const kioskToken = /#token=(\S+)$/.exec(kioskUrl)?.[1]
    expect(kioskToken, kioskUrl).toBeDefined()

    // The hoodie tapped at the station (verified by A): a claim opens.
    const url = sunTapUrl({ metaKey: ZERO_KEY, fileKey: ZERO_KEY, uid: HOODIE_CHIP, counter: 100, base: 'https://tap.example.com/tap' })
    const tap = await post(gw.a, '/station/taps', { rfUid: HOODIE_CHIP, url, readerName: 'ACS ACR1252 PICC' }, { 'x-station-token': stationToken })
    expect(tap.status, JSON.stringify(tap.body)).toBe(200)
    const sql = db.connect()
    const [claim] = await sql<{ id: number; step: string; tokenId: number }[]>`
      SELECT id::int AS id, step, token_id::int AS "tokenId" FROM claims WHERE station_id = ${stationId}`
    expect(claim).toMatchObject({ step: 'open' })
    const [token] = await sql<{ contract: Address; tokenId: string }[]>`
      SELECT contract_address AS contract, token_id AS "tokenId" FROM tokens WHERE id = ${claim!.tokenId}`
    expect(BigInt(token!.tokenId)).toBe(HOODIE_TOKEN)

    // "Finish on your phone" on B's kiosk; the phone opens the link on A and holds its session.
    const handoff = await post(gw.b, `/kiosk/claims/${claim!.id}/handoff`, {}, { 'x-kiosk-token': kioskToken! })
    expect(handoff.status, JSON.stringify(handoff.body)).toBe(200)
    const link = new URL((handoff.body as { url?: string }).url!).pathname
    expect(link).toMatch(/^\/c\/[\w-]{22}$/)
    const opened = await post(gw.a, `${link}/open`, {})
    expect(opened).toMatchObject({ status: 200, body: { claim: { step: 'opened' } } })
    const session = opened.body.session!

    const transfersBefore = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM transfers`
    const txsBefore = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM chain_txs WHERE kind = 'transfer'`
    const answers = await gw.burst(SUBMISSIONS, (server, i) => post(server, `${link}/recipient`, { session, recipient: RECIPIENTS[i] }))

    const statuses = answers.map((r) => r.status)
    expect(statuses.filter((s) => s >= 500)).toEqual([])
    const winners = answers.flatMap((r, i) => (r.status === 200 ? [i] : []))
    expect(winners).toHaveLength(1)
    const winner = winners[0]!
    // Its transaction as the answer was made: queued, or already sent and even mined (the lease holder,
    // maybe the other gateway, woke at the commit; anvil mines at once).
    expect(answers[winner]!.body, JSON.stringify(answers[winner]!.body)).toMatchObject({ success: true, claim: { step: 'claimed', tx: { status: expect.stringMatching(/^(queued|sent|confirmed)$/) } } })
    const losers = answers.filter((r) => r.status !== 200)
    const codes = tally(losers.map((r) => `${r.status} ${r.body.error}`))
    console.log(`${SUBMISSIONS} submissions: the winner was #${winner} on gateway ${winner % 2 === 0 ? 'A' : 'B'}; the others: ${JSON.stringify(codes)}`)
    // Each loser is told the link was used. A loser whose checks read the claim before the winner's
    // commit and the token after it is told the token moved: the same fact from the token's side. Never
    // the generic 409 `conflict` of a serialization failure that escaped: every submission refreshes the
    // token's moves from the chain (one row for all 200), at READ COMMITTED (src/tokens/tokenMoves.ts).
    // Every loser is told the link was used (not token_moved: its own link moved the token).
    expect(Object.keys(codes).filter((code) => code !== '409 claim_link_used')).toEqual([])

    // Exactly one transfer, to the winner's address, and one chain transaction queued for it.
    const transfers = await sql<{ recipient: string; chainTxId: number; via: string }[]>`
      SELECT recipient, chain_tx_id::int AS "chainTxId", via FROM transfers WHERE token_id = ${claim!.tokenId}`
    expect(transfers).toEqual([{ recipient: RECIPIENTS[winner], chainTxId: expect.any(Number), via: 'otp' }])
    expect(await sql`SELECT count(*)::int AS n FROM transfers`).toEqual([{ n: transfersBefore[0]!.n + 1 }])
    expect(await sql`SELECT count(*)::int AS n FROM chain_txs WHERE kind = 'transfer'`).toEqual([{ n: txsBefore[0]!.n + 1 }])
    expect(await sql`SELECT step, via, recipient, chain_tx_id::int AS "chainTxId" FROM claims WHERE id = ${claim!.id}`).toEqual([
      { step: 'claimed', via: 'phone', recipient: RECIPIENTS[winner], chainTxId: transfers[0]!.chainTxId },
    ])

    // The lease holder sends it, once: the hoodie is the winner's on chain, and the phone sees it on either gateway.
    await until('the transfer to be mined', async () => {
      const [open] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM chain_txs WHERE status <> 'mined'`
      return open!.n === 0 ? true : undefined
    }, 30_000, 100)
    const client = createPublicClient({ transport: http(gw.rpcUrl) })
    expect(await client.readContract({ address: token!.contract, abi: phygitalTokenAbi, functionName: 'ownerOf', args: [HOODIE_TOKEN] })).toBe(RECIPIENTS[winner])
    for (const server of [gw.a, gw.b]) {
      expect(await post(server, `${link}/status`, { session })).toMatchObject({ status: 200, body: { claim: { step: 'claimed', tx: { status: 'confirmed' } } } })
      expect(await post(server, `${link}/open`, {})).toMatchObject({ status: 409, body: { error: 'claim_link_used' } })
    }
  }, 60_000)
})

function tally(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1
  return counts
}
