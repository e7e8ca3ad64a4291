import type {
  AttestationRecordedData,
  AttestationRevokedData,
  OutboxEvent,
  SchemaRegisteredData,
} from "@humanpass/event-bus";
import { getAddress, type Hex } from "viem";
import type { OnChainAttestation } from "../chain/attestations.ts";
import type { BlockHeader } from "../chain/headers.ts";
import type { RegistryLog } from "../chain/logs.ts";
import type { EmittedRecord } from "../db/progress.ts";

export const SOURCE = "chain-indexer";

export interface RangeEvents {
  events: OutboxEvent[];
  emitted: EmittedRecord[];
  counts: { schemas: number; attestations: number; revocations: number };
}

export interface BuildInput {
  chainId: number;
  logs: RegistryLog[];
  /** Headers of every block that has a log. */
  headers: Map<bigint, BlockHeader>;
  /** What `getAttestation` returns for every recorded id, as recorded. */
  attestations: Map<Hex, OnChainAttestation>;
  /** Revocation time of every revoked id. */
  revocationTimes: Map<Hex, bigint>;
}

/** Unix seconds as a JSON number; values past 2^53 (nonsense far-future expirations) are capped. */
function seconds(value: bigint): number {
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
}

/** Turns a range's logs into the events of the CHAIN stream, in chain order, and the bookkeeping for reorgs. */
export function buildRangeEvents(input: BuildInput): RangeEvents {
  const result: RangeEvents = {
    events: [],
    emitted: [],
    counts: { schemas: 0, attestations: 0, revocations: 0 },
  };
  // A handful of registries emit every log: checksum each address once, not once per log.
  const registries = new Map<string, Hex>();
  for (const log of input.logs) {
    const position = {
      chainId: input.chainId,
      blockNumber: Number(log.blockNumber),
      blockHash: log.blockHash,
      logIndex: log.logIndex,
      txHash: log.transactionHash,
    };
    let registry = registries.get(log.address);
    if (!registry) {
      registry = getAddress(log.address);
      registries.set(log.address, registry);
    }
    const emit = (type: string, subject: Hex, data: unknown, kind: EmittedRecord["kind"]) => {
      result.events.push({ stream: "CHAIN", source: SOURCE, type, subject, data });
      result.emitted.push({ blockNumber: log.blockNumber, logIndex: log.logIndex, kind, recordId: subject });
    };

    if (log.eventName === "Registered") {
      const { id, registerer, userId, schema } = log.args;
      const data: SchemaRegisteredData = {
        schemaId: id,
        name: "name" in schema ? schema.name : "",
        schema: schema.schema,
        resolver: schema.resolver,
        revocable: schema.revocable,
        registerer,
        registererIden3Id: userId.toString(),
        registry,
        blockTimestamp: seconds(input.headers.get(log.blockNumber)!.timestamp),
        ...position,
      };
      emit("schema_registered", id, data, "schema");
      result.counts.schemas++;
    } else if (log.eventName === "AttestationRecorded") {
      const record = input.attestations.get(log.args.id)!;
      const data: AttestationRecordedData = {
        attestationId: record.id,
        schemaId: record.schemaId,
        creationTime: seconds(record.creationTime),
        expirationTime: seconds(record.expirationTime),
        // As recorded: a later revocation, even in the same range, is its own attestation_revoked event.
        revocationTime: 0,
        attesterDid: record.attester.did,
        attesterIden3Id: record.attester.iden3Id.toString(),
        attesterEthereumAddress: record.attester.ethereumAddress,
        recipientDid: record.recipient.did,
        recipientIden3Id: record.recipient.iden3Id.toString(),
        recipientEthereumAddress: record.recipient.ethereumAddress,
        revocable: record.revocable,
        refId: record.refId,
        data: record.data,
        registry,
        ...position,
      };
      emit("attestation_recorded", record.id, data, "attestation");
      result.counts.attestations++;
    } else {
      const { id, revoker, revokerIden3Id, recipientDid, recipientIden3Id } = log.args;
      const data: AttestationRevokedData = {
        attestationId: id,
        revoker,
        revokerIden3Id: revokerIden3Id.toString(),
        recipientDid,
        recipientIden3Id: recipientIden3Id.toString(),
        revocationTime: seconds(input.revocationTimes.get(id)!),
        registry,
        ...position,
      };
      emit("attestation_revoked", id, data, "revocation");
      result.counts.revocations++;
    }
  }
  return result;
}
