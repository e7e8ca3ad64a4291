import { pageOfAttestations as attestationPage, matched } from "./attestation-pages.ts";
import { BatchedReads } from "./batched-reads.ts";
import { read, type Statement } from "./read.ts";
import { SCHEMAS_VERSION_SQL, SchemaCatalog, withSchema } from "./schema-catalog.ts";
import type {
  AttestationFilter,
  AttestationListRow,
  AttestationRow,
  FilterColumn,
  Page,
  PageRequest,
  Queryable,
  SchemaRow,
} from "./types.ts";

/** What the read functions run on: the pool, its batched page reads, and the schemas held in memory for lists. */
export interface Reader {
  pool: Queryable;
  batches: BatchedReads;
  schemas: SchemaCatalog;
}

export function createReader(pool: Queryable): Reader {
  return { pool, batches: new BatchedReads(pool), schemas: new SchemaCatalog(pool) };
}

/** One page of listed (not revoked) attestations, oldest first by chain position, with the totals. */
export function pageOfAttestations(
  reader: Reader,
  filter: AttestationFilter,
  page: PageRequest,
): Promise<Page<AttestationListRow>> {
  return attestationPage(reader.pool, reader.batches, reader.schemas, filter, page);
}

const ATTESTATION: Statement = {
  name: "attestation",
  text: `select a.id, a.schema_id, a.creation_time, a.expiration_time, a.revocable, a.revoked, a.revocation_time,
  a.attester_did, a.attester_iden3_id, a.attester_address, a.recipient_did, a.recipient_iden3_id,
  a.recipient_address, a.data, a.tx_hash, ${SCHEMAS_VERSION_SQL} as schemas_version
from attestations a where a.id = $1`,
};

export async function findAttestation(reader: Reader, id: string): Promise<AttestationRow | undefined> {
  type Stored = Omit<AttestationRow, "schema_name" | "schema_raw" | "schema_index"> & {
    schemas_version: string;
  };
  const [row] = await read<Stored>(reader.pool, ATTESTATION, [id]);
  return row && { ...row, ...withSchema(row, await reader.schemas.at(row.schemas_version)) };
}

/**
 * Schemas with their place in registration (chain) order, 1 for the first, computed so a reorg cannot leave gaps,
 * and their listed attestations (kept in `list_totals`).
 */
const SCHEMAS_WITH_COUNTS = `select s.id, s.name, s.schema_raw, s.resolver, s.revocable, s.creator, s.creator_iden3_id,
  s.chain_id, s.tx_hash,
  (select count(*) from schemas s2
    where (s2.block_number, s2.log_index, s2.id) <= (s.block_number, s.log_index, s.id))::text as schema_index,
  coalesce((select t.listed from list_totals t where t.scope = s.id), 0) as attestations_count
from schemas s`;

const SCHEMA_COUNT: Statement = { name: "schema-count", text: "select count(*) as total from schemas" };
const SCHEMA_PAGE: Statement = {
  name: "schema-page",
  text: `${SCHEMAS_WITH_COUNTS} order by s.block_number, s.log_index, s.id limit $1 offset $2`,
};
const SCHEMA: Statement = { name: "schema", text: `${SCHEMAS_WITH_COUNTS} where s.id = $1` };
const SCHEMAS_BY_NAME: Statement = {
  name: "schemas-by-name",
  text: `${SCHEMAS_WITH_COUNTS} where lower(s.name) = $1 order by s.block_number, s.log_index limit $2`,
};

export async function pageOfSchemas(reader: Reader, page: PageRequest): Promise<Page<SchemaRow>> {
  const [[{ total }], rows] = await Promise.all([
    read<{ total: string }>(reader.pool, SCHEMA_COUNT, []),
    read<SchemaRow>(reader.pool, SCHEMA_PAGE, [page.size, (page.number - 1) * page.size]),
  ]);
  return { total: Number(total), unique: Number(total), rows };
}

export async function findSchema(reader: Reader, id: string): Promise<SchemaRow | undefined> {
  const [row] = await read<SchemaRow>(reader.pool, SCHEMA, [id]);
  return row;
}

export function findSchemasByName(reader: Reader, name: string, limit: number): Promise<SchemaRow[]> {
  return read<SchemaRow>(reader.pool, SCHEMAS_BY_NAME, [name.toLowerCase(), limit]);
}

const NULLIFIER: Statement = {
  name: "nullifier",
  text: "select nullifier from nullifiers where user_id = $1",
};

export async function findNullifier(reader: Reader, userId: string): Promise<string | undefined> {
  const [row] = await read<{ nullifier: string }>(reader.pool, NULLIFIER, [userId]);
  return row?.nullifier;
}

/** Which sides of listed attestations an identity value (in its matched form) appears on. */
export async function identitySides(
  reader: Reader,
  columns: { attester: FilterColumn; recipient: FilterColumn },
  value: string,
): Promise<{ attester: boolean; recipient: boolean }> {
  const side = (column: FilterColumn) =>
    `exists (select 1 from attestations a where not a.revoked and ${matched(column)} = $1)`;
  const statement: Statement = {
    name: `identity-sides/${columns.attester},${columns.recipient}`,
    text: `select ${side(columns.attester)} as attester, ${side(columns.recipient)} as recipient`,
  };
  const [row] = await read<{ attester: boolean; recipient: boolean }>(reader.pool, statement, [value]);
  return row!;
}
