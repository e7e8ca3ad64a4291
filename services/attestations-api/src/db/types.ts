import type { OutboxTables } from "@humanpass/event-bus";
import type pg from "pg";

/** Chain position of a record: the monotonic key lists are ordered by, and what a reorg rolls back. */
interface ChainPositionColumns {
  chain_id: number;
  block_number: string;
  log_index: number;
  tx_hash: string;
  /** Id of the event that wrote the row (UUIDv7, time-ordered; empty when written without one). */
  event_id: string;
}

export interface SchemasTable extends ChainPositionColumns {
  id: string;
  name: string;
  schema_raw: string;
  resolver: string;
  revocable: boolean;
  creator: string;
  creator_iden3_id: string;
  registry: string;
  block_timestamp: string;
}

export interface AttestationsTable extends ChainPositionColumns {
  id: string;
  schema_id: string;
  creation_time: string;
  expiration_time: string;
  revocable: boolean;
  revoked: boolean;
  revocation_time: string;
  attester_did: string;
  attester_iden3_id: string;
  attester_address: string;
  recipient_did: string;
  recipient_iden3_id: string;
  recipient_address: string;
  ref_id: string;
  data: string;
  registry: string;
}

/** Kept apart from attestations so a revocation seen before its attestation, or rolled back by a reorg, is handled. */
export interface RevocationsTable extends ChainPositionColumns {
  attestation_id: string;
  revoker: string;
  revocation_time: string;
}

export interface NullifiersTable {
  user_id: string;
  nullifier: string;
  verified_at: Date;
}

export interface RevertsTable {
  chain_id: number;
  from_block: string;
  event_id: string;
}

/** One row: raised by every transaction that changes `schemas` (see the API's schema catalog). */
export interface SchemasVersionTable {
  singleton: boolean;
  version: string;
}

export interface Database extends OutboxTables {
  reverts: RevertsTable;
  schemas_version: SchemasVersionTable;
  list_totals: ListTotalsTable;
  list_attesters: ListAttestersTable;
  schemas: SchemasTable;
  attestations: AttestationsTable;
  revocations: RevocationsTable;
  nullifiers: NullifiersTable;
}

/** What `list_totals` counts for one scope: '' for every listed attestation, else a schema id. */
export interface ListTotalsTable {
  scope: string;
  listed: string;
  attesters: string;
}

/** How many listed attestations one attester has within a scope (as in `list_totals`). */
export interface ListAttestersTable {
  scope: string;
  attester_did: string;
  listed: string;
}

/** What the routes read through: a pool on the service's schema (`createPool` of @humanpass/db). */
export type Queryable = Pick<pg.Pool, "query">;

export interface PageRequest {
  number: number;
  size: number;
}

export interface Page<T> {
  total: number;
  unique: number;
  rows: T[];
}

/** Columns an attestation list is filtered on; addresses are matched lower-case (their index is on `lower(…)`). */
export type FilterColumn =
  | "schema_id"
  | "attester_did"
  | "attester_iden3_id"
  | "attester_address"
  | "recipient_did"
  | "recipient_iden3_id"
  | "recipient_address";

/** Conditions on listed attestations, all of which (or any of which) must hold; values in the stored form. */
export interface AttestationFilter {
  match: "all" | "any";
  conditions: Array<{ column: FilterColumn; value: string }>;
}

/** What a list item shows of an attestation's own columns. */
export type StoredAttestation = Pick<
  AttestationsTable,
  | "id"
  | "schema_id"
  | "creation_time"
  | "attester_did"
  | "attester_iden3_id"
  | "attester_address"
  | "recipient_did"
  | "recipient_iden3_id"
  | "recipient_address"
  | "data"
>;

/** A list item's attestation with its schema's name, signature and place (null when the schema is unknown). */
export interface AttestationListRow extends StoredAttestation {
  schema_name: string | null;
  schema_raw: string | null;
  schema_index: string | null;
}

/** What the single form shows: the list item's columns and the attestation's life (expiry, revocation) and tx. */
export type AttestationRow = AttestationListRow &
  Pick<AttestationsTable, "expiration_time" | "revocable" | "revoked" | "revocation_time" | "tx_hash">;

/** A schema with its place in registration order and its count of listed attestations. */
export type SchemaRow = Omit<
  SchemasTable,
  "registry" | "block_timestamp" | "block_number" | "log_index" | "event_id"
> & {
  schema_index: string;
  attestations_count: string;
};

/** What an attestation list item shows of its schema. */
export interface SchemaInfo {
  name: string;
  raw: string;
  /** Place in registration (chain) order, 1 for the first, as a string. */
  index: string;
}

/** The tables the consumers fill (or their triggers); `reindex` empties them (with the inbox) before replaying. */
export const READ_MODEL_TABLES = [
  "schemas",
  "attestations",
  "list_totals",
  "list_attesters",
  "revocations",
  "reverts",
  "nullifiers",
  "inbox",
] as const;
