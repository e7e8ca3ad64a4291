import { type Kysely, sql } from "@humanpass/db";
import { AttestationPages } from "./attestation-pages";
import { type Reader, run, slot, statement } from "./prepared";
import { SCHEMAS_VERSION_SQL, SchemaCatalog, withSchema } from "./schema-catalog";
import type { Database } from "./types";

export type { Reader } from "./prepared";

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

/**
 * Written as a literal, not a bound parameter: the partial indexes are `where not revoked`, and a generic plan of a
 * prepared statement can only use them when the query states the same predicate itself.
 */
const listed = sql<boolean>`not a.revoked`;

function columnExpression(column: FilterColumn) {
  const ref = sql.ref(`a.${column}`);
  return column.endsWith("_address") ? sql`lower(${ref})` : ref;
}

/** A schema's place in registration (chain) order, 1 for the first; computed so a reorg cannot leave gaps. */
const schemaIndex = sql<string>`(
  select count(*) from schemas s2 where (s2.block_number, s2.log_index, s2.id) <= (s.block_number, s.log_index, s.id)
)::text`;

/** What a list item shows of an attestation's own columns. */
export interface StoredAttestation {
  id: string;
  schema_id: string;
  creation_time: string;
  attester_did: string;
  attester_iden3_id: string;
  attester_address: string;
  recipient_did: string;
  recipient_iden3_id: string;
  recipient_address: string;
  data: string;
}

/** A list item's attestation with its schema's name, signature and place (null when the schema is unknown). */
export interface AttestationListRow extends StoredAttestation {
  schema_name: string | null;
  schema_raw: string | null;
  schema_index: string | null;
}

/** What the single form shows: the list item's columns and the attestation's life (expiry, revocation) and tx. */
export interface AttestationRow extends AttestationListRow {
  expiration_time: string;
  revocable: boolean;
  revoked: boolean;
  revocation_time: string;
  tx_hash: string;
}

interface ReadSide {
  pages: AttestationPages;
  schemas: SchemaCatalog;
}

const readSides = new WeakMap<Reader, ReadSide>();

/** The batched pages and the schema catalog of a reader, one of each per reader. */
function readSide(reader: Reader): ReadSide {
  let side = readSides.get(reader);
  if (!side) {
    const schemas = new SchemaCatalog(reader);
    side = { schemas, pages: new AttestationPages(reader, schemas) };
    readSides.set(reader, side);
  }
  return side;
}

/**
 * One page of listed (not revoked) attestations, oldest first by chain position, with the totals; concurrent
 * requests of one filter shape share a statement (see AttestationPages).
 */
export function pageOfAttestations(
  reader: Reader,
  filter: AttestationFilter,
  page: PageRequest,
): Promise<Page<AttestationListRow>> {
  return readSide(reader).pages.page(filter, page);
}

export async function findAttestation(reader: Reader, id: string): Promise<AttestationRow | undefined> {
  const st = statement("attestation", () =>
    reader.db
      .selectFrom("attestations as a")
      .select([
        "a.id",
        "a.schema_id",
        "a.creation_time",
        "a.expiration_time",
        "a.revocable",
        "a.revoked",
        "a.revocation_time",
        "a.attester_did",
        "a.attester_iden3_id",
        "a.attester_address",
        "a.recipient_did",
        "a.recipient_iden3_id",
        "a.recipient_address",
        "a.data",
        "a.tx_hash",
        sql<string>`${sql.raw(SCHEMAS_VERSION_SQL)}`.as("schemas_version"),
      ])
      .where("a.id", "=", slot("id")),
  );
  type Stored = Omit<AttestationRow, "schema_name" | "schema_raw" | "schema_index"> & {
    schemas_version: string;
  };
  const [row] = await run<Stored>(reader, st, { id });
  return row && { ...row, ...withSchema(row, await readSide(reader).schemas.at(row.schemas_version)) };
}

export interface SchemaRow {
  id: string;
  name: string;
  schema_raw: string;
  resolver: string;
  revocable: boolean;
  creator: string;
  creator_iden3_id: string;
  chain_id: number;
  tx_hash: string;
  schema_index: string;
  attestations_count: string;
}

function schemasWithCounts(db: Kysely<Database>) {
  return db
    .selectFrom("schemas as s")
    .select([
      "s.id",
      "s.name",
      "s.schema_raw",
      "s.resolver",
      "s.revocable",
      "s.creator",
      "s.creator_iden3_id",
      "s.chain_id",
      "s.tx_hash",
      schemaIndex.as("schema_index"),
      sql<string>`coalesce((select t.listed from list_totals t where t.scope = s.id), 0)`.as(
        "attestations_count",
      ),
    ]);
}

export async function pageOfSchemas(reader: Reader, page: PageRequest): Promise<Page<SchemaRow>> {
  const count = statement("schemas:count", () =>
    reader.db.selectFrom("schemas").select(sql<string>`count(*)`.as("total")),
  );
  const list = statement("schemas:page", () =>
    schemasWithCounts(reader.db)
      .orderBy("s.block_number")
      .orderBy("s.log_index")
      .orderBy("s.id")
      .limit(slot("limit"))
      .offset(slot("offset")),
  );
  const [[{ total }], rows] = await Promise.all([
    run<{ total: string }>(reader, count, {}),
    run<SchemaRow>(reader, list, { limit: page.size, offset: (page.number - 1) * page.size }),
  ]);
  return { total: Number(total), unique: Number(total), rows };
}

export async function findSchema(reader: Reader, id: string): Promise<SchemaRow | undefined> {
  const st = statement("schema", () => schemasWithCounts(reader.db).where("s.id", "=", slot("id")));
  const [row] = await run<SchemaRow>(reader, st, { id });
  return row;
}

export async function findSchemasByName(reader: Reader, name: string, limit: number): Promise<SchemaRow[]> {
  const st = statement("schemas:by-name", () =>
    schemasWithCounts(reader.db)
      .where(sql`lower(s.name)`, "=", slot("name"))
      .orderBy("s.block_number")
      .orderBy("s.log_index")
      .limit(slot("limit")),
  );
  return run<SchemaRow>(reader, st, { name: name.toLowerCase(), limit });
}

export async function findNullifier(reader: Reader, userId: string): Promise<string | undefined> {
  const st = statement("nullifier", () =>
    reader.db.selectFrom("nullifiers").select("nullifier").where("user_id", "=", slot("userId")),
  );
  const [row] = await run<{ nullifier: string }>(reader, st, { userId });
  return row?.nullifier;
}

/** Which sides of listed attestations an identity value (in its matched form) appears on. */
export async function identitySides(
  reader: Reader,
  columns: { attester: FilterColumn; recipient: FilterColumn },
  value: string,
): Promise<{ attester: boolean; recipient: boolean }> {
  const st = statement(`sides:${columns.attester}:${columns.recipient}`, () => {
    const side = (column: FilterColumn) =>
      sql<boolean>`exists (select 1 from attestations a where ${listed} and ${columnExpression(column)} = ${slot("value")})`;
    return reader.db.selectNoFrom([
      side(columns.attester).as("attester"),
      side(columns.recipient).as("recipient"),
    ]);
  });
  const [row] = await run<{ attester: boolean; recipient: boolean }>(reader, st, { value });
  return row;
}
