import type { createPhygitalContractsRepository, PhygitalContractRow } from '../phygitalContracts.js'
import type { AsyncRepository } from '../types.js'
import type { PgQuery } from './connect.js'

const columns = 'id, team_id, name, symbol, chain_id, address, deploy_tx_id, created_at'

export function createPgPhygitalContractsRepository(sql: PgQuery): AsyncRepository<ReturnType<typeof createPhygitalContractsRepository>> {
  return {
    async insert(c) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO phygital_contracts (team_id, name, symbol, chain_id, address, deploy_tx_id, created_at)
        VALUES (${c.teamId}, ${c.name}, ${c.symbol}, ${c.chainId}, ${c.address}, ${c.deployTxId}, ${c.createdAt}) RETURNING id`
      return row!.id
    },
    async findByName(teamId, name, chainId) {
      const [row] = await sql<PhygitalContractRow[]>`SELECT ${sql.unsafe(columns)} FROM phygital_contracts
        WHERE team_id = ${teamId} AND name = ${name} AND chain_id = ${chainId}`
      return row
    },
    async findByAddress(chainId, address) {
      const [row] = await sql<PhygitalContractRow[]>`SELECT ${sql.unsafe(columns)} FROM phygital_contracts WHERE chain_id = ${chainId} AND address = ${address}`
      return row
    },
    async list(teamId) {
      return [...(await sql<PhygitalContractRow[]>`SELECT ${sql.unsafe(columns)} FROM phygital_contracts WHERE team_id = ${teamId} ORDER BY id`)]
    },
  }
}
