/*
 * vitest globalSetup: one PostgreSQL server for the whole run, started only when a test file asks
 * for it. Starting costs ~1.3 s of a core (initdb 1.0 s, start 0.3 s), which a run of files that use
 * no PostgreSQL should not pay. So setup only opens a control socket in a fresh temp dir and provides
 * its path; the first `testDatabase()` (test/helpers/postgres.ts) connects to it, which starts the
 * server in this process (a child of vitest's main process, whatever worker asked) and answers every
 * later caller with the same result. Teardown stops the server by PID and removes the dir.
 */
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import postgres from 'postgres'
import type { TestProject } from 'vitest/node'
import { migratePostgres } from '../../src/db/pg/migrate.js'
import { findPostgresBin, POSTGRES_INSTALL_HINT, startPostgresServer, type PostgresServer } from './postgresServer.js'

/** Every test database is a copy of this one: the current schema (migratePostgres applied once per run). */
export const TEMPLATE_DATABASE = 'tapgate_template'

export type PostgresHarness = { available: true; control: string } | { available: false; why: string }
/** What the control socket answers, as one JSON document. */
export type PostgresHarnessReply = { ok: true; socketDir: string } | { ok: false; error: string }

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: PostgresHarness
  }
}

export function setup(project: TestProject): (() => Promise<void>) | undefined {
  const bin = findPostgresBin()
  if (!bin) {
    const why = `no PostgreSQL server binaries (initdb, postgres) in /usr/lib/postgresql/<major>/bin or on PATH`
    project.provide('postgres', { available: false, why })
    // Once per run; under CI=true test/helpers/postgres.ts fails every PostgreSQL test file instead.
    if (process.env.CI !== 'true') console.warn(`[postgres] ${why}: skipping the PostgreSQL tests (${POSTGRES_INSTALL_HINT} to run them)`)
    return undefined
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tapgate-pg-'))
  const control = path.join(dir, 'control.sock')
  let server: PostgresServer | undefined
  let started: Promise<PostgresHarnessReply> | undefined
  const start = async (): Promise<PostgresHarnessReply> => {
    try {
      server = await startPostgresServer(dir, bin)
      const sql = postgres({ ...server.clientOptions('postgres'), max: 1 })
      try {
        await sql`create database ${sql(TEMPLATE_DATABASE)}`
      } finally {
        await sql.end({ timeout: 5 })
      }
      const migrateStart = performance.now()
      const template = postgres({ ...server.clientOptions(TEMPLATE_DATABASE), max: 1 })
      try {
        await migratePostgres(template)
      } finally {
        // A template with a connection open cannot be copied.
        await template.end({ timeout: 5 })
      }
      const migrateMs = performance.now() - migrateStart
      const { initdbMs, readyMs } = server.timings
      console.log(
        `[postgres] started for this run: initdb ${Math.round(initdbMs)} ms, ready ${Math.round(readyMs)} ms, template migrated ${Math.round(migrateMs)} ms (pid ${server.pid}, ${bin})`,
      )
      return { ok: true, socketDir: server.socketDir }
    } catch (error) {
      return { ok: false, error: (error as Error).message }
    }
  }
  const controlServer = net.createServer((socket) => {
    socket.on('error', () => {})
    started ??= start()
    void started.then((reply) => socket.end(JSON.stringify(reply)))
  })
  controlServer.listen(control)
  // If vitest exits without running teardown, do not leave a postmaster or the dir behind.
  const onExit = () => {
    if (server && server.pid > 0) {
      try {
        process.kill(server.pid, 'SIGKILL')
      } catch {}
    }
    fs.rmSync(dir, { recursive: true, force: true })
  }
  process.once('exit', onExit)
  project.provide('postgres', { available: true, control })

  return async () => {
    await new Promise<void>((resolve) => controlServer.close(() => resolve()))
    await started
    if (server) {
      const { killed } = await server.stop()
      if (killed) console.warn(`[postgres] no fast shutdown within 10 s: killed (pid ${server.pid})\n${server.log().slice(-2000)}`)
    }
    process.removeListener('exit', onExit)
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
