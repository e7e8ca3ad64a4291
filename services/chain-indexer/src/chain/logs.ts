import { type Address, BaseError } from "viem";
import { indexedEventsAbi } from "./abi";
import type { ChainClient } from "./client";

export type RegistryLog = Awaited<ReturnType<typeof fetchRegistryLogs>>[number];

/** Logs of both schema registry revisions and of the attestation registry, in chain order. */
export async function fetchRegistryLogs(
  client: ChainClient,
  addresses: Address[],
  fromBlock: bigint,
  toBlock: bigint,
) {
  const logs = await client.getLogs({
    address: addresses,
    events: indexedEventsAbi,
    fromBlock,
    toBlock,
    strict: true,
  });
  return logs.sort((a, b) =>
    a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1,
  );
}

/**
 * How many of `logs` (in chain order) make whole blocks and at most `max` logs; when the first block alone has
 * more, all of it, since a block is never split between commits.
 */
export function wholeBlocksWithin(logs: readonly RegistryLog[], max: number): number {
  if (logs.length <= max) return logs.length;
  let end = max;
  while (end > 0 && logs[end]!.blockNumber === logs[end - 1]!.blockNumber) end--;
  if (end > 0) return end;
  end = 1;
  while (end < logs.length && logs[end]!.blockNumber === logs[0]!.blockNumber) end++;
  return end;
}

const RANGE_REFUSED =
  /block range|range (is )?too (large|wide|big)|too many (blocks|results|logs)|limit exceeded|limited to (a )?\d+ blocks?|exceeds? (the )?(max|limit)|more than \d+ (results|logs)|response size|query returned more than/i;

/**
 * Whether eth_getLogs failed because the range or its result is too large: the RPC refused it (providers word it
 * differently) or the answer exceeded viem's response size limit.
 */
export function isRangeRefused(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  if (error.walk((e) => (e as BaseError).name === "ResponseBodyTooLargeError")) return true;
  return RANGE_REFUSED.test(`${error.details ?? ""} ${error.shortMessage} ${error.message}`);
}
