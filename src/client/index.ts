/**
 * tapgate/client: a typed client of the gateway's HTTP API. Its types come from the zod schemas the
 * routes validate with (src/client/operations.ts), so it cannot drift from the server it ships with;
 * at run time it is fetch and nothing else (no zod, no Fastify, no store), for programs that only
 * talk to a gateway.
 *
 * @example
 * import { createClient, TapgateApiError } from 'tapgate/client'
 * const api = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.TAPGATE_API_KEY })
 * const ref = await api.request('GET /refs/{id}', { params: { id: refId } })
 */
export { TapgateApiError } from './apiError.js'
export { createClient } from './createClient.js'
export type { Client, ClientOptions, OperationKey, Operations, RequestArgs, RequestOptions, ResponseOf } from './types.js'
