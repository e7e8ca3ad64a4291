import {
  type Address,
  type Chain,
  type Client,
  createTestClient,
  getAddress,
  type Hex,
  type HttpTransport,
  http,
  keccak256,
  type PublicActions,
  publicActions,
  stringToHex,
  type TestActions,
  type TestRpcSchema,
  type WalletActions,
  walletActions,
} from "viem";
import { privateKeyToAddress } from "viem/accounts";
import { ABIs, loadArtifact } from "./artifacts.ts";
import { DEVNET_CHAIN_ID, devnetChain, MULTICALL3_ADDRESS } from "./chain.ts";
import { startHardhatNode } from "./node-process.ts";

export interface DevnetAccount {
  address: Address;
  privateKey: Hex;
}

export interface DevnetAddresses {
  schemaRegistry: Address;
  legacySchemaRegistry: Address;
  attestationRegistry: Address;
  usdc: Address;
  multicall3: Address;
}

export interface StartDevnetOptions {
  /** 0 (default) lets the OS pick a free port. */
  port?: number;
  /** Funded accounts (10,000 ETH each); the first one deploys the contracts. Default 20. */
  accounts?: number;
  /** Test USDC minted to each of the first `usdcAccounts` accounts, in base units (6 decimals). */
  usdcPerAccount?: bigint;
  usdcAccounts?: number;
  startTimeoutMs?: number;
  /**
   * Besides mining each transaction as it arrives, an empty block every `blockIntervalSeconds`, as a live chain
   * produces blocks whether or not anyone transacts. Off by default, so a test's block numbers are its own; a
   * devnet that people and services use should set it: an indexer that waits for confirmations never sees the
   * last transaction of a chain that stops growing.
   */
  blockIntervalSeconds?: number;
}

export interface Devnet {
  rpcUrl: string;
  chainId: typeof DEVNET_CHAIN_ID;
  chain: Chain;
  addresses: DevnetAddresses;
  accounts: DevnetAccount[];
  /** viem client with test (hardhat), public and wallet actions; it can send from every account above. */
  client: DevnetClient;
  /** Process id of the Hardhat node (absent for a devnet of another process); for diagnostics and benchmarks. */
  pid?: number;
  /** Stops the node and waits until its process has exited. */
  stop(): Promise<void>;
}

export type DevnetClient = Client<
  HttpTransport,
  Chain,
  undefined,
  TestRpcSchema<"hardhat">,
  WalletActions<Chain, undefined> & PublicActions<HttpTransport, Chain, undefined> & TestActions
>;

export function createDevnetClient(rpcUrl: string): DevnetClient {
  return createTestClient({
    chain: devnetChain(rpcUrl),
    mode: "hardhat",
    transport: http(rpcUrl),
    pollingInterval: 50,
  })
    .extend(publicActions)
    .extend(walletActions);
}

/** Deterministic keys, so addresses are the same on every start; the node keeps them unlocked. */
function devnetAccounts(count: number): DevnetAccount[] {
  return Array.from({ length: count }, (_, index) => {
    const privateKey = keccak256(stringToHex(`humanpass devnet account ${index}`));
    return { address: privateKeyToAddress(privateKey), privateKey };
  });
}

/**
 * Starts a Hardhat 2 node on 127.0.0.1 with chain id 45056, deploys the registries, the test USDC and
 * Multicall3, and mints USDC to the first accounts. Addresses are the same on every start.
 */
export async function startDevnet(options: StartDevnetOptions = {}): Promise<Devnet> {
  const accounts = devnetAccounts(options.accounts ?? 20);
  const node = await startHardhatNode({
    port: options.port ?? 0,
    privateKeys: accounts.map((account) => account.privateKey),
    startTimeoutMs: options.startTimeoutMs ?? 30_000,
  });
  try {
    const client = createDevnetClient(node.rpcUrl);
    const addresses = await deployContracts(client, accounts[0]!.address);
    const usdcAccounts = accounts.slice(0, options.usdcAccounts ?? 10);
    const amount = options.usdcPerAccount ?? 1_000_000_000_000n;
    for (const { address } of usdcAccounts) {
      await sendAndConfirm(
        client,
        await client.writeContract({
          address: addresses.usdc,
          abi: ABIs.usdc,
          functionName: "mint",
          args: [address, amount],
          account: accounts[0]!.address,
        }),
      );
    }
    if (options.blockIntervalSeconds)
      await client.setIntervalMining({ interval: options.blockIntervalSeconds });
    return {
      rpcUrl: node.rpcUrl,
      chainId: DEVNET_CHAIN_ID,
      chain: client.chain,
      addresses,
      accounts,
      client,
      pid: node.pid,
      stop: node.stop,
    };
  } catch (error) {
    await node.stop();
    throw error;
  }
}

async function deployContracts(client: DevnetClient, deployer: Address): Promise<DevnetAddresses> {
  const deploy = async (
    name: "SchemaRegistry" | "LegacySchemaRegistry" | "AttestationRegistry" | "TestUSDC",
    args: readonly unknown[] = [],
  ) => {
    const artifact = loadArtifact(name);
    const hash = await client.deployContract({
      abi: artifact.abi,
      bytecode: artifact.bytecode,
      args,
      account: deployer,
    });
    const receipt = await sendAndConfirm(client, hash);
    return getAddress(receipt.contractAddress!);
  };
  const schemaRegistry = await deploy("SchemaRegistry");
  const legacySchemaRegistry = await deploy("LegacySchemaRegistry");
  const attestationRegistry = await deploy("AttestationRegistry", [schemaRegistry]);
  const usdc = await deploy("TestUSDC");
  await client.setCode({
    address: MULTICALL3_ADDRESS,
    bytecode: loadArtifact("Multicall3").deployedBytecode,
  });
  return { schemaRegistry, legacySchemaRegistry, attestationRegistry, usdc, multicall3: MULTICALL3_ADDRESS };
}

/** What a running devnet publishes (e.g. the file `cli start --out` writes) so other processes can use it. */
export interface DevnetInfo {
  rpcUrl: string;
  chainId: number;
  addresses: DevnetAddresses;
  accounts: DevnetAccount[];
}

export function devnetInfo(devnet: Devnet): DevnetInfo {
  return {
    rpcUrl: devnet.rpcUrl,
    chainId: devnet.chainId,
    addresses: devnet.addresses,
    accounts: devnet.accounts,
  };
}

/** A handle on a devnet started by another process; `stop` does nothing. */
export function connectDevnet(info: DevnetInfo): Devnet {
  const client = createDevnetClient(info.rpcUrl);
  return {
    rpcUrl: info.rpcUrl,
    chainId: DEVNET_CHAIN_ID,
    chain: client.chain,
    addresses: info.addresses,
    accounts: info.accounts,
    client,
    stop: async () => {},
  };
}

/** The node mines each transaction as it arrives (automine), so the receipt exists once the send returns. */
export async function sendAndConfirm(client: DevnetClient, hash: Hex) {
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
  return receipt;
}
