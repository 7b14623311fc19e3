import type { FastifyRequest } from 'fastify'
import { BadRequestError, BaseError } from '../errors.js'

const MAX_GET_BODY = 64 * 1024

/**
 * The spec documents a JSON body on two GET endpoints (the transfer
 * signatures), which many HTTP clients and proxies cannot send. Both are
 * accepted: this preValidation hook reads a GET's JSON body (Fastify leaves
 * GET bodies unread) and merges it into the query, which the route's schema
 * then validates. A parameter given both ways must agree.
 */
export async function mergeJsonBodyIntoQuery(request: FastifyRequest): Promise<void> {
  const { headers } = request
  if (headers['transfer-encoding'] === undefined && (headers['content-length'] ?? '0') === '0') return
  const text = await readBody(request)
  if (text.trim() === '') return
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new BadRequestError('invalid_json', 'The request body is not valid JSON')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BadRequestError('invalid_json', 'The request body must be a JSON object of parameters')
  // No prototype, and own keys only: JSON.parse makes "__proto__" an own key, which assigned to a plain
  // object would become its prototype, and what it nests would be read as parameters past the check below.
  // Here it is a parameter name like any other, which the route's schema then drops as unknown.
  const query: Record<string, unknown> = Object.assign(Object.create(null) as Record<string, unknown>, request.query)
  for (const [name, value] of Object.entries(body)) {
    if (Object.hasOwn(query, name) && !sameParameter(query[name], value))
      throw new BadRequestError('conflicting_parameter', `${name} is given in both the query string and the body, with different values`)
    query[name] = value
  }
  request.query = query
}

/**
 * Equal as the schema will read them: addresses and names in any case, a JSON number as its digits.
 * Nothing else is forgiven: `02` or `" 2"` beside `2` is a conflict, since the schema would refuse
 * either one alone.
 */
function sameParameter(a: unknown, b: unknown): boolean {
  return String(a).toLowerCase() === String(b).toLowerCase()
}

async function readBody(request: FastifyRequest): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request.raw) {
    size += (chunk as Buffer).length
    if (size > MAX_GET_BODY) throw new BaseError(413, 'body_too_large', `A GET body may be at most ${MAX_GET_BODY} bytes`)
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}
