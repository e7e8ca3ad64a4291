import type { Address, Hex } from "viem";
import type { ChainClient } from "./client";

/** What the indexer needs of a transaction to rebuild records from its calldata. */
export interface ChainTransaction {
  hash: Hex;
  blockHash: Hex | null;
  from: Address;
  to: Address | null;
  input: Hex;
}

/** Transactions by hash in one JSON-RPC batch; null where the chain does not know the hash (any more). */
export async function fetchTransactions(
  client: ChainClient,
  hashes: readonly Hex[],
): Promise<(ChainTransaction | null)[]> {
  return Promise.all(
    hashes.map(async (hash) => {
      try {
        const tx = await client.getTransaction({ hash });
        return { hash, blockHash: tx.blockHash, from: tx.from, to: tx.to, input: tx.input };
      } catch (error) {
        if ((error as { name?: string }).name === "TransactionNotFoundError") return null;
        throw error;
      }
    }),
  );
}
