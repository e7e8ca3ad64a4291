import { type Address, getAddress, type Hex, zeroAddress } from "viem";
import type { OnChainAttestation } from "./attestations.ts";
import { type AttestationRequest, decodeRecordCall } from "./calldata.ts";
import type { BlockHeader } from "./headers.ts";
import type { RegistryLog } from "./logs.ts";
import type { ChainTransaction } from "./transactions.ts";

export type RecordedLog = Extract<RegistryLog, { eventName: "AttestationRecorded" }>;

export interface RebuildInput {
  registry: Address;
  /** AttestationRecorded logs of the registry, in chain order. */
  logs: readonly RecordedLog[];
  transactions: ReadonlyMap<Hex, ChainTransaction>;
  headers: ReadonlyMap<bigint, BlockHeader>;
}

const UINT64_MAX = 2n ** 64n - 1n;

/**
 * Rebuilds what `getAttestation` returns for each recorded id from the transaction that recorded it, the way the
 * registry stores a request (devnet AttestationRegistry `_record`): creation time is the block's timestamp, the
 * expiration is cut to uint64, a zero attester address becomes the sender, everything else is the request as sent.
 *
 * Only a transaction sent straight to the registry says who the sender was and which requests produced which log,
 * so records of any other transaction (through a multicall or another contract, an unknown function, requests
 * that do not match their logs one to one) are left out: the caller reads those with `getAttestation`.
 */
export function rebuildRecords(input: RebuildInput): Map<Hex, OnChainAttestation> {
  const records = new Map<Hex, OnChainAttestation>();
  const registry = input.registry.toLowerCase();
  for (const [txHash, logs] of byTransaction(input.logs)) {
    const tx = input.transactions.get(txHash);
    if (tx?.to?.toLowerCase() !== registry) continue;
    const requests = decodeRecordCall(tx.input);
    if (!requests || requests.length !== logs.length) continue;
    const rebuilt = logs.map((log, i) =>
      rebuild(log, requests[i]!, getAddress(tx.from), input.headers.get(log.blockNumber)),
    );
    if (rebuilt.some((r) => r === undefined)) continue;
    for (const record of rebuilt) records.set(record!.id, record!);
  }
  return records;
}

function rebuild(
  log: RecordedLog,
  request: AttestationRequest,
  sender: Address,
  header: BlockHeader | undefined,
): OnChainAttestation | undefined {
  const { args } = log;
  const matches =
    header !== undefined &&
    args.timestamp === header.timestamp &&
    args.schemaId === request.schemaId &&
    args.attesterIden3Id === request.attester.iden3Id &&
    args.recipientDid === request.recipient.did &&
    args.recipientIden3Id === request.recipient.iden3Id;
  if (!matches) return undefined;
  const attesterAddress = request.attester.ethereumAddress;
  return {
    id: args.id,
    schemaId: request.schemaId,
    creationTime: header.timestamp & UINT64_MAX,
    expirationTime: request.expirationTime & UINT64_MAX,
    revocationTime: 0n,
    attester: {
      did: request.attester.did,
      iden3Id: request.attester.iden3Id,
      ethereumAddress: attesterAddress === zeroAddress ? sender : attesterAddress,
    },
    recipient: { ...request.recipient },
    revocable: request.revocable,
    refId: request.refId,
    data: request.data,
  };
}

/** Logs grouped by transaction, each group in log order. */
function byTransaction(logs: readonly RecordedLog[]): Map<Hex, RecordedLog[]> {
  const groups = new Map<Hex, RecordedLog[]>();
  for (const log of logs) {
    const group = groups.get(log.transactionHash);
    if (group) group.push(log);
    else groups.set(log.transactionHash, [log]);
  }
  return groups;
}
