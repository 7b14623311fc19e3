import { z } from 'zod'

// GET /health's answer: here rather than beside the route, so the typed client (src/client) reads the
// same schema the route serializes with.

export const ChainHealth = z.object({
  chainId: z.number(),
  embedded: z.boolean(),
  reachable: z.boolean().meta({ description: 'false while the RPC does not answer; requests are still accepted and queued' }),
  pending: z.number().meta({ description: 'Transactions in the outbox that are not mined yet' }),
  lastError: z.string().nullable(),
})

export const Health = z.object({ status: z.literal('ok'), version: z.string(), uptimeSeconds: z.number(), chains: z.array(ChainHealth) })
