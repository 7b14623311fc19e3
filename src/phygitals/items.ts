import type { Repositories } from '../db/store.js'
import type { TokenRow } from '../db/tokens.js'
import { NotFoundError } from '../errors.js'
import { iso } from '../ids.js'

/**
 * The hosted API's "item" is a product a team sells with a chip in it. In tapgate that is a phygital
 * token: one row of tokens, its metadata (name, description, image, attributes) and the chips linked to
 * it. The item's id is the token row's id (docs/decisions.md, "Issue 26: the endpoints").
 *
 * `teamId` null (no API key): every team's items. Apps call the list without a key, and what it shows
 * is public already (each token's metadata is served to anyone at its token URI). The chips of an item
 * take a key (src/routes/hosted.ts says why).
 */
export type Item = {
  id: number
  name: string
  description: string
  imageUrl: string | null
  attributes: { name: string; values: string[] }[]
  contract: { address: string; chainId: number }
  tokenId: string
  createdAt: string
}

export type ItemChip = { uid: string; linkedToken: { contractAddress: string; chainId: number; tokenId: string } }

/** The team's items (or every team's), oldest first. */
export async function listItems(store: Repositories, teamId: number | null): Promise<Item[]> {
  const teams = teamId === null ? (await store.teams.list()).map((t) => t.id) : [teamId]
  const tokens = (await Promise.all(teams.map((id) => store.tokens.listByTeam(id)))).flat()
  return tokens.sort((a, b) => a.id - b.id).map(itemOf)
}

/** @throws NotFoundError item_not_found, for an unknown id and another team's item alike */
export async function getItem(store: Repositories, teamId: number | null, id: number): Promise<Item> {
  return itemOf(await teamToken(store, teamId, id))
}

/** The chips linked to the item's token, in the order they were linked. */
export async function itemChips(store: Repositories, teamId: number, id: number): Promise<ItemChip[]> {
  const token = await teamToken(store, teamId, id)
  const linkedToken = { contractAddress: token.contractAddress, chainId: token.chainId, tokenId: token.tokenId }
  return (await store.tokens.chipUids(token.id)).map((uid) => ({ uid, linkedToken }))
}

/**
 * The item's token row, for views that show more of it than the item (the console: its stored metadata, its owner).
 *
 * @throws NotFoundError item_not_found, for an unknown id and another team's item alike
 */
export async function teamToken(store: Repositories, teamId: number | null, id: number): Promise<TokenRow> {
  const token = await store.tokens.get(id)
  // Another team's item is, to this key, no item: the same 404, so ids cannot be probed across teams.
  if (!token || (teamId !== null && token.teamId !== teamId)) throw new NotFoundError('item_not_found', `No item with id ${id}`)
  return token
}

/** A token row as the hosted API's item. */
export function itemOf(token: TokenRow): Item {
  const metadata = readMetadata(token.metadata)
  const text = (key: string): string => (typeof metadata[key] === 'string' ? (metadata[key] as string) : '')
  const image = text('image')
  return {
    id: token.id,
    name: text('name'),
    description: text('description'),
    imageUrl: image === '' ? null : image,
    attributes: groupAttributes(metadata['attributes']),
    contract: { address: token.contractAddress, chainId: token.chainId },
    tokenId: token.tokenId,
    createdAt: iso(token.createdAt),
  }
}

/** A token's stored metadata as an object; {} when there is none (or it cannot be read). */
export function readMetadata(text: string | null): Record<string, unknown> {
  if (text === null) return {}
  try {
    const value: unknown = JSON.parse(text)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
  } catch {
    // Stored metadata was validated on the way in; an unreadable row shows as an item without details, not a 500.
    return {}
  }
}

/** ERC-721 attributes (`trait_type`, `value`, one per value) as the hosted item's `{name, values}`, one per trait. */
function groupAttributes(raw: unknown): Item['attributes'] {
  if (!Array.isArray(raw)) return []
  const byName = new Map<string, string[]>()
  for (const a of raw as unknown[]) {
    if (a === null || typeof a !== 'object') continue
    const { trait_type: name, value } = a as { trait_type?: unknown; value?: unknown }
    if (typeof name !== 'string' || (typeof value !== 'string' && typeof value !== 'number')) continue
    const values = byName.get(name) ?? []
    values.push(String(value))
    byName.set(name, values)
  }
  return [...byName].map(([name, values]) => ({ name, values }))
}
