import { type Kysely, sql, type Transaction } from "@humanpass/db";
import type {
  AttestationRecordedData,
  AttestationRevokedData,
  BlocksRevertedData,
  CloudEvent,
  SchemaRegisteredData,
  UniquenessVerifiedData,
} from "@humanpass/event-bus";
import type { RawBuilder } from "kysely";
import { getAddress } from "viem";
import type { Database } from "../db/types.ts";

type Trx = Transaction<Database> | Kysely<Database>;

const hex = (value: string) => value.toLowerCase();
const decimal = (value: string) => BigInt(value).toString();

interface Position {
  chainId: number;
  blockNumber: number;
  logIndex: number;
  txHash: string;
}

function position(d: Position, eventId: string) {
  return {
    chain_id: d.chainId,
    block_number: String(d.blockNumber),
    log_index: d.logIndex,
    tx_hash: hex(d.txHash),
    event_id: eventId,
  };
}

/** True when a revert emitted after this event already dropped its block: the record is an orphan. */
function revertedLater(d: Position, eventId: string) {
  return sql<boolean>`exists (select 1 from reverts r
    where r.chain_id = ${d.chainId} and r.from_block <= ${String(d.blockNumber)} and r.event_id > ${eventId})`;
}

/**
 * INSERT … SELECT of one row unless a later revert orphaned it; on conflict the row is replaced only by a newer
 * event's version (a redelivered older event cannot undo a re-indexed record). One statement. The row travels as
 * JSON read with the table's own column types (`jsonb_populate_record`), since bound values in a SELECT list would
 * otherwise be text.
 */
function upsertRow(
  table: "schemas" | "attestations" | "revocations",
  key: string,
  row: Record<string, unknown>,
  computed: Record<string, RawBuilder<unknown>>,
  orphaned: RawBuilder<boolean>,
) {
  const columns = [...Object.keys(row), ...Object.keys(computed)];
  const values = [...Object.keys(row).map((c) => sql.ref(`r.${c}`)), ...Object.values(computed)];
  const updates = columns.filter((c) => c !== key).map((c) => sql`${sql.id(c)} = excluded.${sql.id(c)}`);
  return sql`
    insert into ${sql.id(table)} (${sql.join(columns.map((c) => sql.id(c)))})
    select ${sql.join(values)} from jsonb_populate_record(null::${sql.id(table)}, ${JSON.stringify(row)}::jsonb) r
    where not ${orphaned}
    on conflict (${sql.id(key)}) do update set ${sql.join(updates)}
    where ${sql.id(table)}.event_id <= excluded.event_id`;
}

export async function applySchemaRegistered(trx: Trx, d: SchemaRegisteredData, eventId = ""): Promise<void> {
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
    ...position(d, eventId),
  };
  await raisingSchemasVersion(
    sql`${upsertRow("schemas", "id", row, {}, revertedLater(d, eventId))} returning 1`,
  ).execute(trx);
}

/** Runs `change` (a statement on `schemas` returning a row per row it changed) and, if it changed any, raises
 * the schemas version in the same statement: readers holding the schemas in memory see that their copy is old. */
function raisingSchemasVersion(change: RawBuilder<unknown>) {
  return sql`with changed as (${change})
    update schemas_version set version = version + 1 where exists (select 1 from changed)`;
}

export async function applyAttestationRecorded(
  trx: Trx,
  d: AttestationRecordedData,
  eventId = "",
): Promise<void> {
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
    ...position(d, eventId),
  };
  // A revocation may have been seen first (or the record already carries one); either way the row says so.
  const computed = {
    revoked: sql`exists (select 1 from revocations where attestation_id = ${id}) or ${d.revocationTime} > 0`,
    revocation_time: sql`coalesce((select revocation_time from revocations where attestation_id = ${id}), ${String(d.revocationTime)})`,
  };
  await upsertRow("attestations", "id", row, computed, revertedLater(d, eventId)).execute(trx);
}

export async function applyAttestationRevoked(
  trx: Trx,
  d: AttestationRevokedData,
  eventId = "",
): Promise<void> {
  const row = {
    attestation_id: hex(d.attestationId),
    revoker: getAddress(d.revoker),
    revocation_time: String(d.revocationTime),
    ...position(d, eventId),
  };
  await sql`
    with revocation as (${upsertRow("revocations", "attestation_id", row, {}, revertedLater(d, eventId))}
      returning attestation_id, revocation_time)
    update attestations set revoked = true, revocation_time = revocation.revocation_time
    from revocation where attestations.id = revocation.attestation_id`.execute(trx);
}

/**
 * Orphaned blocks: everything recorded or revoked in them by events emitted before this one is dropped (the
 * canonical blocks are indexed again by later events, which it leaves alone), and the revert is remembered so an
 * orphan applied late is not written.
 */
export async function applyBlocksReverted(trx: Trx, d: BlocksRevertedData, eventId = ""): Promise<void> {
  const from = String(d.fromBlock);
  await trx
    .insertInto("reverts")
    .values({ chain_id: d.chainId, from_block: from, event_id: eventId })
    .onConflict((oc) => oc.columns(["chain_id", "event_id"]).doNothing())
    .execute();
  await trx
    .deleteFrom("attestations")
    .where("chain_id", "=", d.chainId)
    .where("block_number", ">=", from)
    .where("event_id", "<", eventId)
    .execute();
  await sql`
    with dropped as (
      delete from revocations
      where chain_id = ${d.chainId} and block_number >= ${from} and event_id < ${eventId}
      returning attestation_id
    )
    update attestations set revoked = false, revocation_time = 0
    from dropped where attestations.id = dropped.attestation_id`.execute(trx);
  await raisingSchemasVersion(
    sql`delete from schemas where chain_id = ${d.chainId} and block_number >= ${from} and event_id < ${eventId}
      returning 1`,
  ).execute(trx);
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

const CHAIN_HANDLERS: Record<string, (trx: Trx, data: any, eventId: string) => Promise<void>> = {
  schema_registered: applySchemaRegistered,
  attestation_recorded: applyAttestationRecorded,
  attestation_revoked: applyAttestationRevoked,
  blocks_reverted: applyBlocksReverted,
};

export async function applyChainEvent(event: CloudEvent<any>, trx: Trx): Promise<void> {
  const handler = CHAIN_HANDLERS[event.type];
  // The catalog validated the type already; a type added to the stream later is not ours to apply.
  if (handler) await handler(trx, event.data, event.id);
}

export async function applyVerifierEvent(event: CloudEvent<any>, trx: Trx): Promise<void> {
  if (event.type === "uniqueness_verified") await applyUniquenessVerified(trx, event.data);
}
