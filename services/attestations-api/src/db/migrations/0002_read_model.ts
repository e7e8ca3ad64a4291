import { type Kysely, type Migration, sql } from "@humanpass/db";

const position = (t: ReturnType<Kysely<any>["schema"]["createTable"]>) =>
  t
    .addColumn("chain_id", "integer", (c) => c.notNull())
    .addColumn("block_number", "bigint", (c) => c.notNull())
    .addColumn("log_index", "integer", (c) => c.notNull())
    .addColumn("tx_hash", "text", (c) => c.notNull());

/** Columns an attestation list can be filtered on; each gets a partial index over the listed (not revoked) rows. */
const FILTER_COLUMNS = [
  "schema_id",
  "attester_did",
  "attester_iden3_id",
  "attester_address",
  "recipient_did",
  "recipient_iden3_id",
  "recipient_address",
];

export const readModelMigration: Migration = {
  async up(db) {
    await position(
      db.schema
        .createTable("schemas")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("schema_raw", "text", (c) => c.notNull())
        .addColumn("resolver", "text", (c) => c.notNull())
        .addColumn("revocable", "boolean", (c) => c.notNull())
        .addColumn("creator", "text", (c) => c.notNull())
        .addColumn("creator_iden3_id", "text", (c) => c.notNull())
        .addColumn("registry", "text", (c) => c.notNull())
        .addColumn("block_timestamp", "bigint", (c) => c.notNull()),
    ).execute();
    await sql`create index schemas_position on schemas (block_number, log_index, id)`.execute(db);
    await sql`create index schemas_chain_block on schemas (chain_id, block_number)`.execute(db);
    await sql`create index schemas_name on schemas (lower(name))`.execute(db);

    await position(
      db.schema
        .createTable("attestations")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("schema_id", "text", (c) => c.notNull())
        .addColumn("creation_time", "bigint", (c) => c.notNull())
        .addColumn("expiration_time", "bigint", (c) => c.notNull())
        .addColumn("revocable", "boolean", (c) => c.notNull())
        .addColumn("revoked", "boolean", (c) => c.notNull())
        .addColumn("revocation_time", "bigint", (c) => c.notNull())
        .addColumn("attester_did", "text", (c) => c.notNull())
        .addColumn("attester_iden3_id", "text", (c) => c.notNull())
        .addColumn("attester_address", "text", (c) => c.notNull())
        .addColumn("recipient_did", "text", (c) => c.notNull())
        .addColumn("recipient_iden3_id", "text", (c) => c.notNull())
        .addColumn("recipient_address", "text", (c) => c.notNull())
        .addColumn("ref_id", "text", (c) => c.notNull())
        .addColumn("data", "text", (c) => c.notNull())
        .addColumn("registry", "text", (c) => c.notNull()),
    ).execute();
    // Lists are ordered by chain position; every listed-rows index ends with it so a filtered page is an index range.
    await sql`create index attestations_listed on attestations (block_number, log_index, id) where not revoked`.execute(
      db,
    );
    for (const column of FILTER_COLUMNS) {
      // Addresses are matched case-insensitively, so no checksum has to be computed for a lookup.
      const key = column.endsWith("_address") ? sql`lower(${sql.ref(column)})` : sql.ref(column);
      await sql`create index ${sql.id(`attestations_by_${column}`)} on attestations (${key}, block_number, log_index, id) where not revoked`.execute(
        db,
      );
    }
    // The ownership lookup of spec 2: AgentOwnership schema plus the agent's DID or address.
    await sql`create index attestations_schema_recipient_address on attestations (schema_id, lower(recipient_address), block_number, log_index, id) where not revoked`.execute(
      db,
    );
    await sql`create index attestations_schema_recipient_did on attestations (schema_id, recipient_did, block_number, log_index, id) where not revoked`.execute(
      db,
    );
    await sql`create index attestations_chain_block on attestations (chain_id, block_number)`.execute(db);

    await position(
      db.schema
        .createTable("revocations")
        .addColumn("attestation_id", "text", (c) => c.primaryKey())
        .addColumn("revoker", "text", (c) => c.notNull())
        .addColumn("revocation_time", "bigint", (c) => c.notNull()),
    ).execute();
    await sql`create index revocations_chain_block on revocations (chain_id, block_number)`.execute(db);

    await db.schema
      .createTable("nullifiers")
      .addColumn("user_id", "text", (c) => c.primaryKey())
      .addColumn("nullifier", "text", (c) => c.notNull())
      .addColumn("verified_at", "timestamptz", (c) => c.notNull())
      .execute();
  },
};
