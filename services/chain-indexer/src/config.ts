import { Env, splitList } from "@humanpass/config";
import { type Static, Type } from "@sinclair/typebox";
import { type Address, getAddress, isAddress } from "viem";

const AddressVar = (description: string) =>
  Type.String({
    pattern: "^0x[0-9a-fA-F]{40}$",
    description: `${description}, a 0x-prefixed 20-byte hex address`,
  });

/** The service's own environment variables (the common ones come from `@humanpass/service`). */
export const ChainIndexerEnv = Type.Object({
  PORT: Env.port(8083),
  RPC_URL: Env.url(),
  CHAIN_ID: Type.Integer({ minimum: 1, default: 45056, description: "the chain id the RPC must report" }),
  ATTESTATION_REGISTRY_ADDRESS: AddressVar("the AttestationRegistry"),
  SCHEMA_REGISTRY_ADDRESSES: Type.String({
    minLength: 42,
    description: "comma-separated SchemaRegistry addresses (either revision of the Registered event)",
  }),
  START_BLOCK: Type.Integer({ minimum: 0, default: 0, description: "first block to index, an integer >= 0" }),
  CONFIRMATIONS: Type.Integer({
    minimum: 0,
    default: 12,
    description: "blocks behind the head before a block is indexed, an integer >= 0",
  }),
  BLOCK_RANGE: Type.Integer({
    minimum: 1,
    default: 2_000,
    description: "blocks per eth_getLogs, an integer >= 1",
  }),
  // Smaller commits let the outbox relay publish one while the next is being built: 2,000 published 10,000
  // events about a quarter faster than 5,000 in bench/indexer.
  MAX_LOGS_PER_COMMIT: Type.Integer({
    minimum: 1,
    default: 2_000,
    description: "a range with more logs is split before it is committed, an integer >= 1",
  }),
  READ_BATCH_SIZE: Type.Integer({
    minimum: 1,
    default: 100,
    description: "getAttestation reads per multicall (or per JSON-RPC batch), an integer >= 1",
  }),
  READ_CONCURRENCY: Type.Integer({
    minimum: 1,
    default: 4,
    description: "read batches in flight, an integer >= 1",
  }),
  MULTICALL_ADDRESS: Type.String({
    default: "0xcA11bde05977b3631167028862bE2a173976CA11",
    pattern: "^(0x[0-9a-fA-F]{40})?$",
    description: "Multicall3 address; empty reads with plain eth_call in JSON-RPC batches",
  }),
  READ_EVERY_RECORD: Type.Boolean({
    default: false,
    description:
      "true reads every record with getAttestation instead of rebuilding it from the calldata that recorded it (for a registry that may store other than it was sent)",
  }),
  POLL_INTERVAL_MS: Type.Integer({ minimum: 10, default: 2_000, description: "new-head polling, in ms" }),
  RPC_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 15_000, description: "per RPC request, in ms" }),
  RPC_RETRY_BASE_MS: Type.Integer({ minimum: 1, default: 250, description: "first retry delay, in ms" }),
  RPC_RETRY_MAX_MS: Type.Integer({ minimum: 1, default: 30_000, description: "longest retry delay, in ms" }),
  REORG_WINDOW_BLOCKS: Type.Integer({
    minimum: 1,
    default: 10_000,
    description: "how far back block hashes and emitted ids are kept for reorg handling",
  }),
  PROGRESS_LOG_INTERVAL_MS: Type.Integer({
    minimum: 100,
    default: 5_000,
    description: "backfill progress logs, in ms",
  }),
});

export type ChainIndexerConfig = Static<typeof ChainIndexerEnv>;

/** What the indexer itself needs, independent of how it was configured. */
export interface IndexerSettings {
  chainId: number;
  attestationRegistry: Address;
  schemaRegistries: Address[];
  startBlock: bigint;
  confirmations: bigint;
  blockRange: bigint;
  maxLogsPerCommit: number;
  readBatchSize: number;
  readConcurrency: number;
  multicallAddress?: Address;
  /** Read every record with getAttestation instead of rebuilding it from the calldata that recorded it. */
  readEveryRecord?: boolean;
  pollIntervalMs: number;
  retry: { baseMs: number; maxMs: number };
  reorgWindowBlocks: bigint;
  progressLogIntervalMs: number;
}

export function indexerSettings(config: ChainIndexerConfig): IndexerSettings {
  const schemaRegistries = splitList(config.SCHEMA_REGISTRY_ADDRESSES).map((a) => {
    if (!isAddress(a, { strict: false }))
      throw new Error(`SCHEMA_REGISTRY_ADDRESSES: ${a} is not an address`);
    return getAddress(a);
  });
  return {
    chainId: config.CHAIN_ID,
    attestationRegistry: getAddress(config.ATTESTATION_REGISTRY_ADDRESS),
    schemaRegistries,
    startBlock: BigInt(config.START_BLOCK),
    confirmations: BigInt(config.CONFIRMATIONS),
    blockRange: BigInt(config.BLOCK_RANGE),
    maxLogsPerCommit: config.MAX_LOGS_PER_COMMIT,
    readBatchSize: config.READ_BATCH_SIZE,
    readConcurrency: config.READ_CONCURRENCY,
    multicallAddress: config.MULTICALL_ADDRESS ? getAddress(config.MULTICALL_ADDRESS) : undefined,
    readEveryRecord: config.READ_EVERY_RECORD,
    pollIntervalMs: config.POLL_INTERVAL_MS,
    retry: { baseMs: config.RPC_RETRY_BASE_MS, maxMs: config.RPC_RETRY_MAX_MS },
    reorgWindowBlocks: BigInt(config.REORG_WINDOW_BLOCKS),
    progressLogIntervalMs: config.PROGRESS_LOG_INTERVAL_MS,
  };
}
