import type { HttpMethod } from './operationShape.js'

/** Where one request goes: the method and URL its operation key and parameters name. */
export type RequestTarget = { method: HttpMethod; url: string }

const PARAM = /\{([^}]+)\}/g

/**
 * The method and URL of an operation. The key alone says where (`'GET /refs/{id}'`), so the client
 * needs no table at run time. A missing path parameter is the one check made here: left out, it
 * would name another route (`/refs/`) and come back as a confusing 404 rather than the caller's bug.
 *
 * @example
 * requestTarget('http://127.0.0.1:3000/', 'GET /refs/{id}', { id: 'r1' }, { includeMetadata: 'true' })
 * // { method: 'GET', url: 'http://127.0.0.1:3000/refs/r1?includeMetadata=true' }
 */
export function requestTarget(
  baseUrl: string,
  operation: string,
  params: Readonly<Record<string, unknown>> = {},
  query: Readonly<Record<string, unknown>> = {},
): RequestTarget {
  const space = operation.indexOf(' ')
  const method = operation.slice(0, space) as HttpMethod
  const path = operation.slice(space + 1).replace(PARAM, (_match, name: string) => {
    const value = params[name]
    if (value === undefined || value === null || value === '') throw new TypeError(`${operation}: the path parameter ${name} is missing`)
    return encodeURIComponent(String(value))
  })
  const search = queryString(query)
  return { method, url: `${baseUrl.replace(/\/+$/, '')}${path}${search ? `?${search}` : ''}` }
}

/**
 * A query as strings, which is all a query string holds: the server's schemas read `'true'`, `'42'`.
 * Absent values are left out (an optional parameter not given); an array repeats its name.
 */
function queryString(query: Readonly<Record<string, unknown>>): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === undefined || item === null) continue
      if (typeof item === 'object' || typeof item === 'function' || typeof item === 'symbol')
        throw new TypeError(`The query parameter ${name} is not a string, number or boolean`)
      search.append(name, String(item))
    }
  }
  return search.toString()
}
