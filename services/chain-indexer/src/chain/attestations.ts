import type { Address, Hex } from "viem";
import { attestationRegistryAbi } from "./abi.ts";
import type { ChainClient } from "./client.ts";

export type OnChainAttestation = Awaited<ReturnType<typeof readAttestationBatch>>[number];

export interface ReadOptions {
  registry: Address;
  /** Multicall3; without it every read is its own eth_call, sent together as one JSON-RPC batch. */
  multicallAddress?: Address;
  blockNumber: bigint;
}

/** One batch of `getAttestation` reads at one block: a single multicall, or a single JSON-RPC batch. */
export async function readAttestationBatch(client: ChainClient, ids: readonly Hex[], options: ReadOptions) {
  const call = (id: Hex) =>
    ({
      address: options.registry,
      abi: attestationRegistryAbi,
      functionName: "getAttestation",
      args: [id],
    }) as const;
  if (options.multicallAddress) {
    return client.multicall({
      contracts: ids.map(call),
      allowFailure: false,
      multicallAddress: options.multicallAddress,
      blockNumber: options.blockNumber,
      // Chunking is ours (READ_BATCH_SIZE); viem's default would split by calldata bytes.
      batchSize: 0,
    });
  }
  return Promise.all(ids.map((id) => client.readContract({ ...call(id), blockNumber: options.blockNumber })));
}
