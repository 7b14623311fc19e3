// What a driver error that escaped every domain check answers: a lost race 409, an unreachable database
// 503, never a 500. The codes are PostgreSQL's and SQLite's own (src/db/storeErrors.ts).
import Fastify from 'fastify'
import { afterAll, beforeAll, expect, test } from 'vitest'
import errorHandler from '../../src/plugins/errorHandler.js'

const app = Fastify({ logger: false })

const driverError = (code: string) => Object.assign(new Error(`driver says ${code}`), { code })

beforeAll(async () => {
  await app.register(errorHandler)
  app.get('/throw/:code', async (request) => {
    throw driverError((request.params as { code: string }).code)
  })
  await app.ready()
})
afterAll(() => app.close())

test.each([
  ['23505', 409, 'conflict'],
  ['40001', 409, 'conflict'],
  ['40P01', 409, 'conflict'],
  ['SQLITE_CONSTRAINT_UNIQUE', 409, 'conflict'],
  ['ECONNREFUSED', 503, 'database_unavailable'],
  ['CONNECTION_CLOSED', 503, 'database_unavailable'],
  ['57P01', 503, 'database_unavailable'],
  ['57P03', 503, 'database_unavailable'],
  ['08006', 503, 'database_unavailable'],
  ['SQLITE_BUSY', 503, 'database_unavailable'],
  ['XX000', 500, 'internal_error'],
])('a driver error %s answers %i %s', async (code, status, error) => {
  const res = await app.inject({ url: `/throw/${code}` })
  expect(res.statusCode).toBe(status)
  expect(res.json()).toMatchObject({ success: false, error })
  // Nothing of the driver's message reaches the client.
  expect(res.body).not.toContain('driver says')
})
