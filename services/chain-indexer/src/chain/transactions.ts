import type { Address, Hex } from "viem";
import type { ChainClient } from "./client.ts";
import { isResponseTooLarge } from "./retry.ts";

/** What the indexer needs of a transaction to rebuild records from its calldata. */
export interface ChainTransaction {
  hash: Hex;
  blockHash: Hex | null;
  from: Address;
  to: Address | null;
  input: Hex;
}

/**
 * Transactions by hash, in JSON-RPC batches: null where the chain does not know the hash (any more). A batch whose
 * answer exceeds the client's size limit is split in halves; a transaction too large on its own is left out, and
 * its records are read instead.
 */
export async function fetchTransactions(
  client: ChainClient,
  hashes: readonly Hex[],
): Promise<Map<Hex, ChainTransaction | null>> {
  try {
    const found = await Promise.all(hashes.map((hash) => fetchTransaction(client, hash)));
    return new Map(hashes.map((hash, i) => [hash, found[i]!]));
  } catch (error) {
    if (!isResponseTooLarge(error)) throw error;
    if (hashes.length === 1) return new Map();
    const half = Math.ceil(hashes.length / 2);
    const first = await fetchTransactions(client, hashes.slice(0, half));
    return new Map([...first, ...(await fetchTransactions(client, hashes.slice(half)))]);
  }
}

async function fetchTransaction(client: ChainClient, hash: Hex): Promise<ChainTransaction | null> {
  try {
    const tx = await client.getTransaction({ hash });
    return { hash, blockHash: tx.blockHash, from: tx.from, to: tx.to, input: tx.input };
  } catch (error) {
    if ((error as { name?: string }).name === "TransactionNotFoundError") return null;
    throw error;
  }
}
