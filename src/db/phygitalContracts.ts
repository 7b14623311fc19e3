import type { Db } from './sqlite/openDatabase.js'

export type PhygitalContractRow = {
  id: number
  teamId: number
  name: string
  symbol: string
  chainId: number
  address: string
  deployTxId: number | null
  createdAt: number
}

const columns = `id, team_id AS teamId, name, symbol, chain_id AS chainId, address, deploy_tx_id AS deployTxId, created_at AS createdAt`

export function createPhygitalContractsRepository(db: Db) {
  const insert = db.prepare(
    `INSERT INTO phygital_contracts (team_id, name, symbol, chain_id, address, deploy_tx_id, created_at)
     VALUES (@teamId, @name, @symbol, @chainId, @address, @deployTxId, @createdAt)`,
  )
  const byName = db.prepare<[number, string, number], PhygitalContractRow>(
    `SELECT ${columns} FROM phygital_contracts WHERE team_id = ? AND name = ? AND chain_id = ?`,
  )
  const byAddress = db.prepare<[number, string], PhygitalContractRow>(
    `SELECT ${columns} FROM phygital_contracts WHERE chain_id = ? AND address = ?`,
  )
  const byTeam = db.prepare<[number], PhygitalContractRow>(`SELECT ${columns} FROM phygital_contracts WHERE team_id = ? ORDER BY id`)
  return {
    insert: (c: Omit<PhygitalContractRow, 'id'>) => Number(insert.run(c).lastInsertRowid),
    findByName: (teamId: number, name: string, chainId: number) => byName.get(teamId, name, chainId),
    findByAddress: (chainId: number, address: string) => byAddress.get(chainId, address),
    list: (teamId: number) => byTeam.all(teamId),
  }
}
