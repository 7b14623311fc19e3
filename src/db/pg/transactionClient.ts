import pLimit from 'p-limit'
import type { PgSql, PgTransaction } from './connect.js'

/** A client that runs transactions only, no more at once than it has connections. */
export type TransactionClient = {
  readonly sql: PgSql
  begin<T>(mode: string, fn: (transaction: PgTransaction) => Promise<T>): Promise<T>
}

/**
 * postgres.js 3.4.9 can write a transaction's BEGIN on a connection busy with other statements and skip
 * reserving it: when the BEGIN is the statement that fills that connection's pipeline, or the socket's
 * buffer is full (porsager/postgres#823, #1189; the fix, #1218, is not released). The transaction then
 * fails with UNSAFE_TRANSACTION, and worse, the connection goes back to the pool inside the open
 * transaction, where other requests' statements run and are lost with its later ROLLBACK. A BEGIN
 * written to an idle connection is always reserved. So `sql` runs nothing but these transactions, and
 * at most `max` of them at once: each BEGIN finds a connection idle (a transaction's connection is back
 * in the pool, idle, when its COMMIT or ROLLBACK resolves) or opens one.
 * test/postgres/transactionPipeline.test.ts puts a BEGIN at every pipeline position.
 */
export function transactionClient(sql: PgSql): TransactionClient {
  const limit = pLimit(sql.options.max)
  return {
    sql,
    begin: <T>(mode: string, fn: (transaction: PgTransaction) => Promise<T>) =>
      limit(() => sql.begin(mode, (transaction) => fn(transaction as unknown as PgTransaction)) as Promise<T>),
  }
}
