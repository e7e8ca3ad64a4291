import { type Kysely, sql, type Transaction } from "@humanpass/db";
import type {
  AttestationRecordedData,
  AttestationRevokedData,
  BlocksRevertedData,
  CloudEvent,
  SchemaRegisteredData,
  UniquenessVerifiedData,
} from "@humanpass/events";
import { getAddress } from "viem";
import type { Database } from "../db/types";

type Trx = Transaction<Database> | Kysely<Database>;

const hex = (value: string) => value.toLowerCase();
const decimal = (value: string) => BigInt(value).toString();

function position(d: { chainId: number; blockNumber: number; logIndex: number; txHash: string }) {
  return {
    chain_id: d.chainId,
    block_number: String(d.blockNumber),
    log_index: d.logIndex,
    tx_hash: hex(d.txHash),
  };
}

export async function applySchemaRegistered(trx: Trx, d: SchemaRegisteredData): Promise<void> {
  const row = {
    id: hex(d.schemaId),
    name: d.name,
    schema_raw: d.schema,
    resolver: getAddress(d.resolver),
    revocable: d.revocable,
    creator: getAddress(d.registerer),
    creator_iden3_id: decimal(d.registererIden3Id),
    registry: getAddress(d.registry),
    block_timestamp: String(d.blockTimestamp),
    ...position(d),
  };
  // A schema seen again (re-indexed after a reorg) takes its newest position.
  await trx
    .insertInto("schemas")
    .values(row)
    .onConflict((oc) => oc.column("id").doUpdateSet(row))
    .execute();
}

export async function applyAttestationRecorded(trx: Trx, d: AttestationRecordedData): Promise<void> {
  const id = hex(d.attestationId);
  const row = {
    id,
    schema_id: hex(d.schemaId),
    creation_time: String(d.creationTime),
    expiration_time: String(d.expirationTime),
    revocable: d.revocable,
    attester_did: d.attesterDid,
    attester_iden3_id: decimal(d.attesterIden3Id),
    attester_address: getAddress(d.attesterEthereumAddress),
    recipient_did: d.recipientDid,
    recipient_iden3_id: decimal(d.recipientIden3Id),
    recipient_address: getAddress(d.recipientEthereumAddress),
    ref_id: hex(d.refId),
    data: hex(d.data),
    registry: getAddress(d.registry),
    ...position(d),
  };
  // A revocation may have been seen first (or the record already carries one); either way the row says so.
  const revokedBefore = sql<boolean>`exists (select 1 from revocations where attestation_id = ${id}) or ${d.revocationTime} > 0`;
  const revocationTime = sql<string>`coalesce((select revocation_time from revocations where attestation_id = ${id}), ${String(d.revocationTime)})`;
  await trx
    .insertInto("attestations")
    .values({ ...row, revoked: revokedBefore, revocation_time: revocationTime })
    .onConflict((oc) =>
      oc.column("id").doUpdateSet({
        ...row,
        revoked: sql`excluded.revoked`,
        revocation_time: sql`excluded.revocation_time`,
      }),
    )
    .execute();
}

export async function applyAttestationRevoked(trx: Trx, d: AttestationRevokedData): Promise<void> {
  const id = hex(d.attestationId);
  const row = {
    attestation_id: id,
    revoker: getAddress(d.revoker),
    revocation_time: String(d.revocationTime),
    ...position(d),
  };
  await sql`
    with revocation as (
      insert into revocations ${sql.raw(columnsOf(row))} values (${sql.join(Object.values(row))})
      on conflict (attestation_id) do update set ${sql.raw(updateSet(row))}
      returning attestation_id, revocation_time
    )
    update attestations set revoked = true, revocation_time = revocation.revocation_time
    from revocation where attestations.id = revocation.attestation_id`.execute(trx);
}

/** Orphaned blocks: everything recorded or revoked in them is dropped; the canonical blocks are indexed again after. */
export async function applyBlocksReverted(trx: Trx, d: BlocksRevertedData): Promise<void> {
  const from = String(d.fromBlock);
  await trx
    .deleteFrom("attestations")
    .where("chain_id", "=", d.chainId)
    .where("block_number", ">=", from)
    .execute();
  await sql`
    with dropped as (
      delete from revocations where chain_id = ${d.chainId} and block_number >= ${from} returning attestation_id
    )
    update attestations set revoked = false, revocation_time = 0
    from dropped where attestations.id = dropped.attestation_id`.execute(trx);
  await trx
    .deleteFrom("schemas")
    .where("chain_id", "=", d.chainId)
    .where("block_number", ">=", from)
    .execute();
}

/** The first nullifier seen for a user is kept: it is the stable per-person identifier clients count with. */
export async function applyUniquenessVerified(trx: Trx, d: UniquenessVerifiedData): Promise<void> {
  await trx
    .insertInto("nullifiers")
    .values({
      user_id: decimal(d.userId),
      nullifier: decimal(d.nullifier),
      verified_at: new Date(d.verifiedAt),
    })
    .onConflict((oc) => oc.column("user_id").doNothing())
    .execute();
}

function columnsOf(row: Record<string, unknown>): string {
  return `(${Object.keys(row).join(", ")})`;
}

function updateSet(row: Record<string, unknown>): string {
  return Object.keys(row)
    .filter((k) => k !== "attestation_id")
    .map((k) => `${k} = excluded.${k}`)
    .join(", ");
}

const CHAIN_HANDLERS: Record<string, (trx: Trx, data: any) => Promise<void>> = {
  schema_registered: applySchemaRegistered,
  attestation_recorded: applyAttestationRecorded,
  attestation_revoked: applyAttestationRevoked,
  blocks_reverted: applyBlocksReverted,
};

export async function applyChainEvent(event: CloudEvent<any>, trx: Trx): Promise<void> {
  const handler = CHAIN_HANDLERS[event.type];
  // The catalog validated the type already; a type added to the stream later is not ours to apply.
  if (handler) await handler(trx, event.data);
}

export async function applyVerifierEvent(event: CloudEvent<any>, trx: Trx): Promise<void> {
  if (event.type === "uniqueness_verified") await applyUniquenessVerified(trx, event.data);
}
