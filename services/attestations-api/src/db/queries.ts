import { type Kysely, sql } from "@humanpass/db";
import type { Expression, ExpressionBuilder, SqlBool } from "kysely";
import { type ReadPool, runPrepared } from "./prepared";
import type { Database } from "./types";

export interface PageRequest {
  number: number;
  size: number;
}

export interface Page<T> {
  total: number;
  unique: number;
  rows: T[];
}

type AttestationScope = ExpressionBuilder<Database & { a: Database["attestations"] }, "a">;
export type AttestationFilter = (eb: AttestationScope) => Expression<SqlBool>;

/**
 * Written as a literal, not a bound parameter: the partial indexes are `where not revoked`, and a generic plan of a
 * prepared statement can only use them when the query states the same predicate itself.
 */
const listed = sql<boolean>`not a.revoked`;

/** The read side: kysely builds the queries, the pool runs them as prepared statements. */
export interface Reader {
  db: Kysely<Database>;
  pool?: ReadPool;
}

/** A schema's place in registration (chain) order, 1 for the first; computed so a reorg cannot leave gaps. */
const schemaIndex = sql<string | null>`case when s.id is null then null else (
  select count(*) from schemas s2 where (s2.block_number, s2.log_index, s2.id) <= (s.block_number, s.log_index, s.id)
)::text end`;

export interface AttestationRow {
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
  data: string;
  tx_hash: string;
  schema_name: string | null;
  schema_raw: string | null;
  schema_index: string | null;
}

function attestationsWithSchema(db: Kysely<Database>) {
  return db
    .selectFrom("attestations as a")
    .leftJoin("schemas as s", "s.id", "a.schema_id")
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
      "s.name as schema_name",
      "s.schema_raw",
      schemaIndex.as("schema_index"),
    ]);
}

/**
 * One page of listed (not revoked) attestations, oldest first by chain position, with the totals, in one
 * statement: new attestations only ever append, so the page boundaries a client walks never move.
 */
export async function pageOfAttestations(
  reader: Reader,
  filter: AttestationFilter,
  page: PageRequest,
): Promise<Page<AttestationRow>> {
  const stats = reader.db
    .selectFrom("attestations as a")
    .where(listed)
    .where(filter)
    .select([
      sql<string>`count(*)`.as("total"),
      sql<string>`count(distinct a.attester_did)`.as("unique_attesters"),
    ]);
  const items = attestationsWithSchema(reader.db)
    .where(listed)
    .where(filter as any)
    .orderBy("a.block_number")
    .orderBy("a.log_index")
    .orderBy("a.id")
    .limit(page.size)
    .offset((page.number - 1) * page.size);
  const rows = (await runPrepared(
    reader,
    reader.db
      .selectFrom(stats.as("c"))
      .leftJoinLateral(items.as("p"), (join) => join.onTrue())
      .selectAll(),
  )) as unknown as Array<AttestationRow & { total: string; unique_attesters: string }>;
  const first = rows[0];
  return {
    total: Number(first?.total ?? 0),
    unique: Number(first?.unique_attesters ?? 0),
    rows: rows.filter((r) => r.id !== null),
  };
}

export async function findAttestation(reader: Reader, id: string): Promise<AttestationRow | undefined> {
  const [row] = await runPrepared(reader, attestationsWithSchema(reader.db).where("a.id", "=", id));
  return row as AttestationRow | undefined;
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
      sql<string>`(select count(*) from attestations a where a.schema_id = s.id and ${listed})`.as(
        "attestations_count",
      ),
    ]);
}

export async function pageOfSchemas(reader: Reader, page: PageRequest): Promise<Page<SchemaRow>> {
  const [{ total }] = await runPrepared(
    reader,
    reader.db.selectFrom("schemas").select(sql<string>`count(*)`.as("total")),
  );
  const rows = (await runPrepared(
    reader,
    schemasWithCounts(reader.db)
      .orderBy("s.block_number")
      .orderBy("s.log_index")
      .orderBy("s.id")
      .limit(page.size)
      .offset((page.number - 1) * page.size),
  )) as SchemaRow[];
  return { total: Number(total), unique: Number(total), rows };
}

export async function findSchema(reader: Reader, id: string): Promise<SchemaRow | undefined> {
  const [row] = await runPrepared(reader, schemasWithCounts(reader.db).where("s.id", "=", id));
  return row as SchemaRow | undefined;
}

export async function findSchemasByName(reader: Reader, name: string, limit: number): Promise<SchemaRow[]> {
  return (await runPrepared(
    reader,
    schemasWithCounts(reader.db)
      .where(sql`lower(s.name)`, "=", name.toLowerCase())
      .orderBy("s.block_number")
      .orderBy("s.log_index")
      .limit(limit),
  )) as SchemaRow[];
}

export async function findNullifier(reader: Reader, userId: string): Promise<string | undefined> {
  const [row] = await runPrepared(
    reader,
    reader.db.selectFrom("nullifiers").select("nullifier").where("user_id", "=", userId),
  );
  return row?.nullifier;
}

/** Which sides of listed attestations an identity value appears on. */
export async function identitySides(
  reader: Reader,
  columns: {
    attester: "attester_did" | "attester_address" | "attester_iden3_id";
    recipient: "recipient_did" | "recipient_address" | "recipient_iden3_id";
  },
  value: string,
): Promise<{ attester: boolean; recipient: boolean }> {
  const side = (column: string) =>
    sql<boolean>`exists (select 1 from attestations a where ${listed} and ${sql.ref(`a.${column}`)} = ${value})`;
  const [row] = await runPrepared(
    reader,
    reader.db.selectNoFrom([side(columns.attester).as("attester"), side(columns.recipient).as("recipient")]),
  );
  return { attester: row.attester, recipient: row.recipient };
}
