/*
 * The client's types, checked by `tsc --noEmit` (the root tsconfig includes test/): what compiles and,
 * with @ts-expect-error, what must not. The calls are never made; vitest runs the file for its
 * expectTypeOf assertions, which are no-ops at run time.
 */
import { expectTypeOf, test } from 'vitest'
import { createClient, type Client, type OperationKey, type RequestOptions, type ResponseOf, TapgateApiError } from '../../src/client/index.js'

const api: Client = createClient({ baseUrl: 'http://127.0.0.1:1' })
const ALICE = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'

/** Never called: each line is a compile-time check. */
async function compileOnly() {
  // @ts-expect-error an operation that does not exist (GET /ref, not /refs)
  await api.request('GET /ref/{id}', { params: { id: 'r' } })
  // @ts-expect-error the path as Fastify writes it is not the key format
  await api.request('GET /refs/:id', { params: { id: 'r' } })
  await api.request('POST /phygitals/transfer', {
    // @ts-expect-error a misspelled body field (recipient)
    body: { contractAddress: ALICE, chainId: 31337, tokenId: '1', recipent: ALICE },
  })
  // @ts-expect-error the body misses a required field (recipient)
  await api.request('POST /phygitals/transfer', { body: { contractAddress: ALICE, chainId: 31337, tokenId: '1' } })
  // @ts-expect-error a path parameter is required
  await api.request('GET /refs/{id}', {})
  // @ts-expect-error a route without a body takes none
  await api.request('GET /chip-groups', { body: { name: 'x' } })
  // @ts-expect-error pauseState is a boolean
  await api.request('POST /events/toggle-pause-state', { body: { contractId: 1, pauseState: 'yes' } })
  // @ts-expect-error a query is strings as the server reads them: includeMetadata is 'true' | 'false' | '1' | '0'
  await api.request('GET /refs/{id}', { params: { id: 'r' }, query: { includeMetadata: 'yes' } })

  // Compiles: no options where the operation needs none; z.input (numbers or digit strings) where it takes them.
  const health = await api.request('GET /health')
  expectTypeOf(health.uptimeSeconds).toEqualTypeOf<number>()
  await api.request('GET /items/{id}', { params: { id: 7 } })
  await api.request('GET /items/{id}', { params: { id: '7' } })
  await api.request('POST /phygitals/transfer', { body: { contractAddress: ALICE, chainId: '31337', tokenId: 1, recipient: 'alice.eth' } })
  await api.request('POST /events/mint/self', { body: { recipient: ALICE }, headers: { 'x-service-code': 'otp' } })
}

test('answers are typed from the routes’ 200 schemas (z.output)', () => {
  expectTypeOf(compileOnly).toBeFunction()
  expectTypeOf<ResponseOf<'GET /refs/{id}'>['isValidRef']>().toEqualTypeOf<boolean>()
  expectTypeOf<ResponseOf<'GET /refs/{id}'>['linkedToken']>().toEqualTypeOf<
    { contractAddress: string; chainId: number; tokenId: string; otp?: string; ownerAddress?: string; metadata?: Record<string, unknown> } | undefined
  >()
  expectTypeOf<ResponseOf<'GET /chip-groups'>>().toEqualTypeOf<Array<{ id: number; name: string; createdAt: string }>>()
  expectTypeOf<ResponseOf<'POST /phygitals/transfer'>>().toEqualTypeOf<{ success: true; initialTxHash: string }>()
  expectTypeOf<ResponseOf<'GET /health'>['chains'][number]['lastError']>().toEqualTypeOf<string | null>()
})

test('requests are typed from the routes’ params, query and body schemas (z.input)', () => {
  expectTypeOf<RequestOptions<'GET /refs/{id}'>['params']>().toEqualTypeOf<{ id: string }>()
  expectTypeOf<RequestOptions<'GET /items/{id}'>['params']>().toEqualTypeOf<{ id: string | number }>()
  expectTypeOf<RequestOptions<'GET /health'>>().toMatchTypeOf<{ body?: never; params?: never; query?: never }>()
  expectTypeOf<'GET /refs/{id}'>().toMatchTypeOf<OperationKey>()
  expectTypeOf<'GET /tap'>().not.toMatchTypeOf<OperationKey>()
  expectTypeOf<TapgateApiError['code']>().toEqualTypeOf<string>()
})
