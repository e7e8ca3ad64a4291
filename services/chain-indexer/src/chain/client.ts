import { createPublicClient, type HttpTransport, http, type PublicClient } from "viem";

/**
 * A viem client for the chain's JSON-RPC. Calls made in the same tick go out as one JSON-RPC batch, which is
 * how block headers (and, without Multicall3, attestation reads) are fetched together. viem's own retries are
 * off: the indexer retries whole steps with its own back-off, logging each retry.
 */
export function createChainClient(
  rpcUrl: string,
  options: { timeoutMs: number },
): PublicClient<HttpTransport, undefined> {
  return createPublicClient({
    transport: http(rpcUrl, {
      batch: { batchSize: 500, wait: 0 },
      retryCount: 0,
      timeout: options.timeoutMs,
    }),
    cacheTime: 0,
  });
}

export type ChainClient = ReturnType<typeof createChainClient>;
