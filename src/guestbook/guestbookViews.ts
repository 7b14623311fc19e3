import type { GuestbookContractRow, GuestbookEventRow } from '../db/guestbook.js'
import { iso } from '../ids.js'

export const contractView = (c: GuestbookContractRow) => ({
  id: c.id,
  name: c.name,
  symbol: c.symbol,
  address: c.address,
  chainId: c.chainId,
  createdAt: iso(c.createdAt),
  status: c.status,
})

// The spec's field table calls the address `address`, its sample `contractAddress`: both are sent.
export const eventView = (e: GuestbookEventRow) => ({
  id: e.id,
  name: e.name,
  contract: {
    id: e.contractId,
    chainId: e.chainId,
    tokenId: e.tokenId,
    address: e.contractAddress,
    contractAddress: e.contractAddress,
  },
  createdAt: iso(e.createdAt),
})

export type GuestbookContractView = ReturnType<typeof contractView>
export type GuestbookEventView = ReturnType<typeof eventView>
