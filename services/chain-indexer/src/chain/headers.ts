import type { Hex } from "viem";
import type { ChainClient } from "./client.ts";

export interface BlockHeader {
  number: bigint;
  hash: Hex;
  parentHash: Hex;
  timestamp: bigint;
}

/** Headers by number in one JSON-RPC batch; null where the chain has no such block (yet, or any more). */
export async function fetchHeaders(
  client: ChainClient,
  numbers: readonly bigint[],
): Promise<(BlockHeader | null)[]> {
  return Promise.all(
    numbers.map(async (blockNumber) => {
      try {
        const block = await client.getBlock({ blockNumber });
        return {
          number: block.number,
          hash: block.hash,
          parentHash: block.parentHash,
          timestamp: block.timestamp,
        };
      } catch (error) {
        if ((error as { name?: string }).name === "BlockNotFoundError") return null;
        throw error;
      }
    }),
  );
}
