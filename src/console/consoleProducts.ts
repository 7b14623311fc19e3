import pLimit from 'p-limit'
import type { ChainDeps } from '../chain/chainDeps.js'
import type { Chains } from '../chain/chains.js'
import { RpcError } from '../chain/rpc.js'
import type { KeyScheme } from '../db/chipProfiles.js'
import type { ChipRow } from '../db/chips.js'
import type { Repositories } from '../db/store.js'
import type { TokenRow } from '../db/tokens.js'
import { BaseError, ValidationError } from '../errors.js'
import { mediaPath } from '../media/mediaCache.js'
import { itemChips, itemOf, readMetadata, teamToken } from '../phygitals/items.js'
import { readTokenOwner } from '../phygitals/tokenOwner.js'
import { updateTokenMetadata } from '../phygitals/updateTokenMetadata.js'
import { listChipProfiles } from '../profiles/chipProfiles.js'
import { MetadataString } from '../schemas/metadata.js'
import { issuesToErrors } from '../validation/issuesToErrors.js'

/** A phygital token of the team (the hosted API's item) as the console's Products tab shows it. */
export type ConsoleProduct = {
  id: number
  name: string
  description: string
  collection: string
  /** The image as this gateway's /media/<key> path (as the kiosk shows it), null when the metadata has none usable. */
  imageUrl: string | null
  contract: { address: string; chainId: number }
  tokenId: string
  chips: { uid: string; profile: string | null; lastTapAt: string | null }[]
  owner: ProductOwner
  metadata: Record<string, unknown>
}

export type ProductOwner = { address: string | null; state: 'owned' | 'not_minted' | 'unknown' }

export type ConsoleChipProfile = { name: string; scheme: KeyScheme; mode: 'aes' | 'lrp'; urlTemplate: string | null; chips: number }

/** Owner reads in flight at once: a team with a thousand products must not open a thousand RPC requests. */
const OWNER_READS = 8
const UNKNOWN: ProductOwner = { address: null, state: 'unknown' }

/** The chain could not answer (unreachable, not running here, not configured, or an RPC error that is no revert). */
const chainCannotAnswer = (error: unknown): boolean =>
  (error instanceof BaseError && (error.code === 'chain_unavailable' || error.code === 'chain_not_configured')) || error instanceof RpcError

/**
 * Reads owners for one answer, OWNER_READS at a time. A chain that could not answer is not asked
 * again in the same answer: each try could wait out the RPC timeout, and the list must come back.
 */
function ownerReader(chains: Chains): (token: TokenRow) => Promise<ProductOwner> {
  const limit = pLimit(OWNER_READS)
  const silent = new Set<number>()
  return (token) =>
    limit(async () => {
      if (silent.has(token.chainId)) return UNKNOWN
      try {
        const address = await readTokenOwner(chains, token)
        return address === null ? { address: null, state: 'not_minted' } : { address, state: 'owned' }
      } catch (error) {
        if (!chainCannotAnswer(error)) throw error
        silent.add(token.chainId)
        return UNKNOWN
      }
    })
}

/** What every product of one answer shares: the team's chips and profile names, read once. */
type TeamChips = { chips: Map<string, ChipRow>; profileNames: Map<number, string> }

async function teamChips(store: Repositories, teamId: number): Promise<TeamChips> {
  const [chips, profiles] = await Promise.all([store.chips.listByTeam(teamId), store.chipProfiles.listByTeam(teamId)])
  return { chips: new Map(chips.map((c) => [c.uid, c])), profileNames: new Map(profiles.map((p) => [p.id, p.name])) }
}

async function productView(deps: ChainDeps, p: { teamId: number; token: TokenRow; team: TeamChips; owner: Promise<ProductOwner> }): Promise<ConsoleProduct> {
  const { store } = deps
  const item = itemOf(p.token)
  const metadata = readMetadata(p.token.metadata)
  const chips = await Promise.all(
    (await itemChips(store, p.teamId, item.id)).map(async ({ uid }) => {
      const profileId = p.team.chips.get(uid)?.profileId ?? null
      // The chip's history as the Taps tab shows it filtered by its UID: its newest row is the last tap.
      const [last] = await store.tapLog.listOfTeam({ teamId: p.teamId, stationId: null, uid, accepted: null, limit: 1 })
      return {
        uid,
        profile: profileId === null ? null : (p.team.profileNames.get(profileId) ?? null),
        lastTapAt: last ? new Date(last.at).toISOString() : null,
      }
    }),
  )
  return {
    id: item.id,
    name: item.name,
    description: item.description,
    collection: typeof metadata.collection === 'string' ? metadata.collection : '',
    imageUrl: await mediaPath(store, item.imageUrl, deps.now()),
    contract: item.contract,
    tokenId: item.tokenId,
    chips,
    owner: await p.owner,
    metadata,
  }
}

/**
 * The team's products, oldest first: its phygital tokens as the hosted API lists its items (items.ts),
 * with their chips (itemChips) and owners on chain (readTokenOwner, read in parallel, bounded). A
 * chain that cannot be asked makes its products' owner `unknown`, never a failed list.
 */
export async function consoleProducts(deps: ChainDeps, p: { teamId: number }): Promise<ConsoleProduct[]> {
  const { store } = deps
  // listItems' rows for one team: tokens.listByTeam, oldest first; the row is kept for its metadata and key.
  const tokens = await store.tokens.listByTeam(p.teamId)
  const team = await teamChips(store, p.teamId)
  const ownerOf = ownerReader(deps.chains)
  return Promise.all(tokens.map((token) => productView(deps, { teamId: p.teamId, token, team, owner: ownerOf(token) })))
}

/**
 * One of the team's products.
 *
 * @throws NotFoundError item_not_found (another team's, as GET /items/:id)
 */
export async function consoleProduct(deps: ChainDeps, p: { teamId: number; productId: number }): Promise<ConsoleProduct> {
  const token = await teamToken(deps.store, p.teamId, p.productId)
  return productView(deps, { teamId: p.teamId, token, team: await teamChips(deps.store, p.teamId), owner: ownerReader(deps.chains)(token) })
}

/**
 * Replaces a product's metadata with the object the console sends (its edited fields and the rest):
 * PATCH /phygitals/metadata's own function and checks (updateTokenMetadata: PhygitalMetadata, extra
 * fields kept, the ERC-4906 refresh queued), the object as the JSON text that route takes (so also
 * MetadataString's size bound). A bad field is 400 with `errors` keyed by its path (`metadata.image`),
 * and nothing is stored.
 *
 * @throws NotFoundError item_not_found (another team's, whatever the body); ValidationError validation_failed
 */
export async function setConsoleProductMetadata(deps: ChainDeps, p: { teamId: number; productId: number; metadata: Record<string, unknown> }): Promise<ConsoleProduct> {
  // The team's own product first: another team's is a 404 whatever the body says.
  const token = await teamToken(deps.store, p.teamId, p.productId)
  const text = MetadataString.safeParse(JSON.stringify(p.metadata))
  if (!text.success) throw new ValidationError('metadata failed validation', issuesToErrors(text.error.issues, 'metadata'))
  await updateTokenMetadata(deps, { key: { chainId: token.chainId, contractAddress: token.contractAddress, tokenId: token.tokenId }, teamId: p.teamId, metadata: text.data })
  return consoleProduct(deps, p)
}

/** The team's chip profiles as `tapgate profile list` lists them (listChipProfiles): never a key. */
export async function consoleChipProfiles(deps: Pick<ChainDeps, 'store'> & { secret: Buffer }, p: { teamId: number }): Promise<ConsoleChipProfile[]> {
  return (await listChipProfiles(deps.store, deps.secret, p.teamId)).map((profile) => ({
    name: profile.name,
    scheme: profile.keyScheme,
    mode: profile.mode,
    urlTemplate: profile.urlTemplate,
    chips: profile.chips,
  }))
}
