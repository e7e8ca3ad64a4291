import {
  type Address,
  BaseError,
  type ContractEventName,
  formatLog,
  numberToHex,
  type ParseEventLogsReturnType,
  parseEventLogs,
  type RpcLog,
  toEventSelector,
} from "viem";
import { indexedEventsAbi } from "./abi.ts";
import { AbiWords, MalformedAbiError } from "./abi-words.ts";
import type { ChainClient } from "./client.ts";
import { isResponseTooLarge } from "./retry.ts";

export type RegistryLog = ParseEventLogsReturnType<
  typeof indexedEventsAbi,
  ContractEventName<typeof indexedEventsAbi>,
  true
>[number];
type RecordedLog = Extract<RegistryLog, { eventName: "AttestationRecorded" }>;

const RECORDED = toEventSelector(indexedEventsAbi.find((item) => item.name === "AttestationRecorded")!);
const TOPICS = [...new Set(indexedEventsAbi.map((item) => toEventSelector(item)))];

/** Logs of both schema registry revisions and of the attestation registry, in chain order. */
export async function fetchRegistryLogs(
  client: ChainClient,
  addresses: Address[],
  fromBlock: bigint,
  toBlock: bigint,
): Promise<RegistryLog[]> {
  const raw = await client.request({
    method: "eth_getLogs",
    params: [
      {
        address: addresses,
        topics: [TOPICS],
        fromBlock: numberToHex(fromBlock),
        toBlock: numberToHex(toBlock),
      },
    ],
  });
  const logs: RegistryLog[] = [];
  const others: RpcLog[] = [];
  for (const log of raw) {
    if (log.topics[0] !== RECORDED) others.push(log);
    else {
      const recorded = decodeRecorded(log);
      if (recorded) logs.push(recorded);
    }
  }
  logs.push(...parseEventLogs({ abi: indexedEventsAbi, logs: others, strict: true }));
  return logs.sort((a, b) =>
    a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1,
  );
}

/**
 * `AttestationRecorded`, most of what a backfill reads, decoded by hand: viem's generic event decoder costs several
 * times more CPU. Undefined for a log that does not decode as the event, which viem's strict decoding drops too;
 * `logs.test.ts` holds it to viem's result.
 */
export function decodeRecorded(log: RpcLog): RecordedLog | undefined {
  const [, id, schemaId] = log.topics;
  if (log.topics.length !== 3 || !id || !schemaId) return undefined;
  const data = new AbiWords(log.data);
  try {
    const args = {
      id,
      schemaId,
      attesterIden3Id: data.uint(0),
      recipientDid: data.string(data.offset(32)),
      recipientIden3Id: data.uint(64),
      timestamp: data.uint(96),
    };
    return formatLog(log, { args, eventName: "AttestationRecorded" }) as RecordedLog;
  } catch (error) {
    if (error instanceof MalformedAbiError) return undefined;
    throw error;
  }
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
  if (isResponseTooLarge(error)) return true;
  return RANGE_REFUSED.test(`${error.details ?? ""} ${error.shortMessage} ${error.message}`);
}
