import {
  type Abi,
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  getAddress,
  type Hex,
  http,
  type TransactionReceipt,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { foundry } from 'viem/chains'
import { expect } from 'vitest'
import { guestbookAbi, guestbookBytecode } from '../../contracts/artifacts/Guestbook.js'
import { phygitalTokenAbi, phygitalTokenBytecode } from '../../contracts/artifacts/PhygitalToken.js'
import { type AnvilProcess, spawnAnvil } from '../../src/chain/spawnAnvil.js'

/** anvil's default funded accounts 0, 1, 2 (mnemonic "test test … junk"). */
export const DEPLOYER_KEY: Hex = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
export const HOLDER_KEY: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'
export const STRANGER_KEY: Hex = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a'

export const BASE_URI = 'https://tapgate.example/metadata/31337/'

export type Chain = Awaited<ReturnType<typeof startChain>>

/** One anvil, with a public client, a test client and wallet clients for the three accounts. */
export async function startChain() {
  const anvil: AnvilProcess = await spawnAnvil()
  const transport = http(anvil.url)
  // Automine: the receipt exists when eth_sendRawTransaction returns, so poll fast.
  const publicClient = createPublicClient({ chain: foundry, transport, pollingInterval: 20 })
  const testClient = createTestClient({ chain: foundry, transport, mode: 'anvil' })
  const wallet = (key: Hex) => createWalletClient({ chain: foundry, transport, account: privateKeyToAccount(key) })
  const deployer = wallet(DEPLOYER_KEY)
  const holder = wallet(HOLDER_KEY)
  const stranger = wallet(STRANGER_KEY)
  const verifierKey = generatePrivateKey()
  const verifier = privateKeyToAccount(verifierKey).address

  /** Waits for the receipt and requires success. */
  const mined = async (hash: Hex): Promise<TransactionReceipt> => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    expect(receipt.status).toBe('success')
    return receipt
  }

  const deploy = async (abi: Abi, bytecode: Hex, args: readonly unknown[]): Promise<{ address: Address; receipt: TransactionReceipt }> => {
    const receipt = await mined(await deployer.deployContract({ abi, bytecode, args }))
    if (!receipt.contractAddress) throw new Error('deploy receipt has no contractAddress')
    return { address: getAddress(receipt.contractAddress), receipt }
  }

  return {
    anvil,
    publicClient,
    testClient,
    deployer,
    holder,
    stranger,
    verifierKey,
    verifier,
    mined,
    deployPhygitalToken: (signVerifier: Address = verifier, baseURI = BASE_URI) =>
      deploy(phygitalTokenAbi, phygitalTokenBytecode, ['Tapgate Phygitals', 'TGP', signVerifier, baseURI]),
    deployGuestbook: (signVerifier: Address = verifier, baseURI = BASE_URI) =>
      deploy(guestbookAbi, guestbookBytecode, ['Tapgate Guestbook', 'TGG', signVerifier, baseURI]),
    blockNumber: () => publicClient.getBlockNumber({ cacheTime: 0 }),
  }
}

/**
 * Awaits a contract write (or simulation) that must revert, and checks the
 * custom error viem decoded from the revert data; returns its arguments.
 */
export async function expectRevert(promise: Promise<unknown>, errorName: string): Promise<readonly unknown[]> {
  let error: unknown
  try {
    await promise
  } catch (caught) {
    error = caught
  }
  if (!(error instanceof BaseError)) throw new Error(`expected a revert with ${errorName}, got ${error === undefined ? 'success' : String(error)}`)
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError)
  if (!(reverted instanceof ContractFunctionRevertedError)) throw new Error(`expected a revert with ${errorName}, got: ${error.message}`)
  expect(reverted.data?.errorName).toBe(errorName)
  return reverted.data?.args ?? []
}
