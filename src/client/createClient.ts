import { readAnswer } from './readAnswer.js'
import { requestTarget } from './requestUrl.js'
import type { Client, ClientOptions, CommonRequestOptions, OperationKey } from './types.js'

/** A request's options as the code below reads them: what RequestOptions<K> is for every K. */
type SentOptions = CommonRequestOptions & {
  readonly params?: Readonly<Record<string, unknown>>
  readonly query?: Readonly<Record<string, unknown>>
  readonly body?: unknown
}

/**
 * A client of one gateway, typed from the routes' own zod schemas (src/client/operations.ts): what
 * `request` takes and resolves with is what the route validates and answers, with no interface
 * written twice. It validates nothing itself (the gateway does, and answers 400 with the field's
 * message), so it stays a thin fetch: no zod, no schema is loaded at run time.
 *
 * @example
 * const api = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey })
 * const groups = await api.request('GET /chip-groups')
 * const ref = await api.request('GET /refs/{id}', { params: { id: refId } })
 */
export function createClient(options: ClientOptions): Client {
  const send = options.fetch ?? globalThis.fetch
  const common: Record<string, string> = {
    accept: 'application/json',
    ...(options.apiKey === undefined ? {} : { 'x-service-api-key': options.apiKey }),
    ...options.headers,
  }

  async function request(operation: OperationKey, sent: SentOptions = {}): Promise<unknown> {
    const { method, url } = requestTarget(options.baseUrl, operation, sent.params, sent.query)
    const hasBody = sent.body !== undefined
    const response = await send(url, {
      method,
      headers: { ...common, ...(hasBody ? { 'content-type': 'application/json' } : {}), ...sent.headers },
      body: hasBody ? JSON.stringify(sent.body) : undefined,
      signal: sent.signal,
    })
    return readAnswer(operation, response)
  }

  // Each operation's options are a SentOptions and its answer is its ResponseOf; the generic
  // signature says which, which one function body cannot.
  return { request: request as Client['request'] }
}
