/*
 * src/client/operations.ts held to the app: its operations are the OpenAPI document's (every one there
 * is in the table or in excludedOperations, with its reason), each exists as a route, and each entry's
 * schemas take the same path parameters, query parameters and body fields, and answer the same fields,
 * as the document says the route does. The document is made from the routes' own schemas, so a route
 * that changes its schema, or a table entry that names another route's, fails here.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { excludedOperations, operations } from '../../src/client/operations.js'
import type { OperationSchemas } from '../../src/client/operationShape.js'
import { createTestGateway, type TestGateway } from '../helpers/gateway.js'

type JsonSchema = { $ref?: string; type?: string | string[]; properties?: Record<string, JsonSchema>; items?: JsonSchema; anyOf?: JsonSchema[]; oneOf?: JsonSchema[]; allOf?: JsonSchema[] }
type Parameter = { in: 'path' | 'query' | 'header'; name: string }
type Operation = {
  parameters?: Parameter[]
  requestBody?: { content: Record<string, { schema: JsonSchema }> }
  responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>
}
type Document = { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, JsonSchema> } }

let gw: TestGateway
let document: Document
beforeAll(async () => {
  gw = await createTestGateway()
  const res = await gw.app.inject({ url: '/openapi.json' })
  expect(res.statusCode).toBe(200)
  document = res.json<Document>()
})
afterAll(async () => gw?.close())

const table = Object.entries(operations) as Array<[string, OperationSchemas]>

/** The document's operations by key, `METHOD /path` as the table writes them. */
const documentOperations = (): Map<string, Operation> =>
  new Map(Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]): [string, Operation] => [`${method.toUpperCase()} ${path}`, operation])))

/**
 * The field names a JSON schema names at its top level (an array's: `[]` and its items'), following
 * `$ref`s and unions, sorted. Enough to tell one request or answer shape from another.
 */
function fieldsOf(schema: JsonSchema | undefined, definitions: Record<string, JsonSchema>): string[] {
  const names = new Set<string>()
  const visit = (node: JsonSchema | undefined): void => {
    if (!node) return
    if (node.$ref) return visit(definitions[node.$ref.replace(/^#\/(components\/schemas|\$defs)\//, '')])
    if (node.type === 'array') {
      names.add('[]')
      fieldsOf(node.items, definitions).forEach((name) => names.add(`[].${name}`))
    }
    Object.keys(node.properties ?? {}).forEach((name) => names.add(name))
    for (const member of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])]) visit(member)
  }
  visit(schema)
  return [...names].sort()
}

/** The same, for a zod schema of the table: as the route reads it (input) or answers it (output). */
function fieldsOfZod(schema: z.ZodType | undefined, io: 'input' | 'output'): string[] {
  if (!schema) return []
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema & { $defs?: Record<string, JsonSchema> }
  return fieldsOf(json, json.$defs ?? {})
}

const parameterNames = (operation: Operation, where: Parameter['in']) =>
  (operation.parameters ?? []).filter((parameter) => parameter.in === where).map((parameter) => parameter.name).sort()

test('every operation of the OpenAPI document is in the table or excluded with a reason, and nothing else is in either', () => {
  const inDocument = [...documentOperations().keys()].sort()
  const listed = [...table.map(([key]) => key), ...Object.keys(excludedOperations)].sort()
  expect(listed).toEqual(inDocument)
  expect(table.map(([key]) => key).filter((key) => key in excludedOperations)).toEqual([])
  for (const reason of Object.values(excludedOperations)) expect(reason.length).toBeGreaterThan(20)
  // Not an empty table that trivially agrees.
  expect(table.length).toBeGreaterThan(50)
})

test('each excluded operation is one the client could not serve: no JSON answer, or no JSON body', () => {
  const inDocument = documentOperations()
  for (const key of Object.keys(excludedOperations)) {
    const operation = inDocument.get(key)!
    const answers = Object.keys(operation.responses['200']?.content ?? {})
    const body = Object.keys(operation.requestBody?.content ?? {})
    expect({ key, jsonOnly: answers.length === 1 && answers[0] === 'application/json' && body.every((type) => type === 'application/json') }).toEqual({ key, jsonOnly: false })
  }
})

describe.each(table)('%s', (key, schemas) => {
  const [method, path] = key.split(' ') as [string, string]

  test('is a route of the app', () => {
    expect(gw.app.hasRoute({ method: method as 'GET', url: path.replace(/\{(\w+)\}/g, ':$1') })).toBe(true)
  })

  test('takes the path parameters, query and body fields the document gives, and answers its 200 fields as JSON', () => {
    const operation = documentOperations().get(key)!
    const definitions = document.components?.schemas ?? {}
    expect(fieldsOfZod(schemas.params, 'input')).toEqual(parameterNames(operation, 'path'))
    expect([...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort()).toEqual(parameterNames(operation, 'path'))
    expect(fieldsOfZod(schemas.query, 'input')).toEqual(parameterNames(operation, 'query'))

    const body = operation.requestBody?.content['application/json']?.schema
    expect(schemas.body !== undefined).toBe(operation.requestBody !== undefined)
    expect(fieldsOfZod(schemas.body, 'input')).toEqual(fieldsOf(body, definitions))

    const answer = operation.responses['200']?.content
    expect(Object.keys(answer ?? {})).toEqual(['application/json'])
    const answered = fieldsOf(answer!['application/json']!.schema, definitions)
    expect(fieldsOfZod(schemas.response, 'output')).toEqual(answered)
  })
})
