import type { Kysely, Migration } from "@humanpass/db";
import { sql } from "@humanpass/db";

export const cursor: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("cursor")
      .addColumn("chain_id", "integer", (c) => c.primaryKey())
      .addColumn("block_number", "bigint", (c) => c.notNull())
      .addColumn("block_hash", "text", (c) => c.notNull())
      .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema
      .createTable("blocks")
      .addColumn("chain_id", "integer", (c) => c.notNull())
      .addColumn("block_number", "bigint", (c) => c.notNull())
      .addColumn("block_hash", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("blocks_pkey", ["chain_id", "block_number"])
      .execute();
    await db.schema
      .createTable("emitted")
      .addColumn("chain_id", "integer", (c) => c.notNull())
      .addColumn("block_number", "bigint", (c) => c.notNull())
      .addColumn("log_index", "integer", (c) => c.notNull())
      .addColumn("kind", "text", (c) =>
        c.notNull().check(sql`kind in ('schema', 'attestation', 'revocation')`),
      )
      .addColumn("record_id", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("emitted_pkey", ["chain_id", "block_number", "log_index"])
      .execute();
  },
};
