import type { Abi, ContractFunctionArgs, ContractFunctionName, DecodeFunctionResultReturnType, Hex } from 'viem'
import { decodeErrorResult, decodeFunctionResult, encodeFunctionData, getHttpRpcClient } from 'viem/utils'

/*
 * JSON-RPC over HTTP with viem's transport (viem/utils, not the root entry:
 * the gateway must start in under 1.5 s and the root costs ~200 ms more).
 * Two failure kinds matter to the relayer and the API, and they are kept
 * apart: the node could not be reached (retry later; requests are still
 * accepted and queued), or it answered with an error (a real refusal).
 */

/** The RPC could not be reached or did not answer in time. */
export class ChainUnreachableError extends Error {
  override name = 'ChainUnreachableError'
  constructor(
    readonly chainId: number,
    detail: string,
  ) {
    super(`Chain ${chainId} RPC is unreachable: ${detail}`)
  }
}

/** The node answered with a JSON-RPC error. */
export class RpcError extends Error {
  override name = 'RpcError'
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(`${method}: ${message} (code ${code})`)
  }
}

/** A contract call reverted; errorName is the custom error when the ABI knows it. */
export class ContractRevertError extends Error {
  override name = 'ContractRevertError'
  constructor(
    readonly errorName: string | undefined,
    readonly data: Hex | undefined,
    message: string,
  ) {
    super(message)
  }
}

export type RpcReceipt = {
  transactionHash: Hex
  blockNumber: Hex
  status: Hex
  contractAddress: Hex | null
  logs: { address: Hex; topics: Hex[]; data: Hex }[]
}

export type Rpc = {
  chainId: number
  url: string
  request<T = unknown>(method: string, params?: unknown[], options?: { timeoutMs?: number }): Promise<T>
  /** eth_call of a view function, decoded; a revert becomes ContractRevertError. */
  read<const abi extends Abi, name extends ContractFunctionName<abi, 'pure' | 'view'>>(p: {
    address: Hex
    abi: abi
    functionName: name
    args: ContractFunctionArgs<abi, 'pure' | 'view', name>
    blockTag?: string
  }): Promise<DecodeFunctionResultReturnType<abi, name>>
  blockNumber(): Promise<bigint>
  receipt(hash: Hex): Promise<RpcReceipt | null>
  blockTimestamp(blockNumber: Hex): Promise<number>
}

export function createRpc(chainId: number, url: string, { timeoutMs = 5_000 }: { timeoutMs?: number } = {}): Rpc {
  const client = getHttpRpcClient(url, { timeout: timeoutMs })

  async function request<T>(method: string, params: unknown[] = [], options: { timeoutMs?: number } = {}): Promise<T> {
    let response: { result?: unknown; error?: { code: number; message: string; data?: unknown } }
    try {
      response = (await client.request({ body: { method, params }, timeout: options.timeoutMs ?? timeoutMs })) as typeof response
    } catch (error) {
      throw new ChainUnreachableError(chainId, (error as Error).message.split('\n')[0] ?? String(error))
    }
    if (response.error) throw new RpcError(method, response.error.code, response.error.message, response.error.data)
    return response.result as T
  }

  const rpc: Rpc = {
    chainId,
    url,
    request,
    async read(p) {
      const data = encodeFunctionData({ abi: p.abi, functionName: p.functionName, args: p.args } as never)
      let result: Hex
      try {
        result = await request<Hex>('eth_call', [{ to: p.address, data }, p.blockTag ?? 'latest'])
      } catch (error) {
        throw asRevert(error, p.abi) ?? error
      }
      if (result === '0x') throw new ContractRevertError(undefined, undefined, `No contract at ${p.address} on chain ${chainId}`)
      return decodeFunctionResult({ abi: p.abi, functionName: p.functionName, data: result } as never) as never
    },
    blockNumber: async () => BigInt(await request<Hex>('eth_blockNumber')),
    receipt: (hash) => request<RpcReceipt | null>('eth_getTransactionReceipt', [hash]),
    blockTimestamp: async (blockNumber) => {
      const block = await request<{ timestamp: Hex } | null>('eth_getBlockByNumber', [blockNumber, false])
      return block ? Number(BigInt(block.timestamp)) : 0
    },
  }
  return rpc
}

/** Turns a JSON-RPC "execution reverted" error into a ContractRevertError with the decoded error name. */
export function asRevert(error: unknown, abi: Abi): ContractRevertError | undefined {
  if (!(error instanceof RpcError)) return undefined
  if (error.code !== 3 && !/revert/i.test(error.message)) return undefined
  const data = typeof error.data === 'string' && error.data.startsWith('0x') ? (error.data as Hex) : undefined
  let errorName: string | undefined
  if (data && data.length >= 10) {
    try {
      errorName = decodeErrorResult({ abi, data }).errorName
    } catch {
      // An error of another contract (or a plain require string): keep the raw data.
    }
  }
  return new ContractRevertError(errorName, data, errorName ? `reverted with ${errorName}` : error.message)
}
