import { type Kysely, type Migration, sql } from "@humanpass/db";

export const noncesAndClaims: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("nonces")
      .addColumn("nonce", "text", (c) => c.primaryKey())
      .addColumn("path", "text", (c) => c.notNull().check(sql`path in ('helper', 'direct')`))
      .addColumn("message", "text", (c) => c.notNull())
      .addColumn("issued_at", "timestamptz", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("nonces_issued_at").on("nonces").column("issued_at").execute();

    await db.schema
      .createTable("claims")
      .addColumn("id", "bigserial", (c) => c.primaryKey())
      .addColumn("path", "text", (c) => c.notNull().check(sql`path in ('helper', 'direct')`))
      .addColumn("agent_did", "text", (c) => c.notNull())
      .addColumn("agent_address", "text", (c) => c.notNull())
      .addColumn("human_id", "text", (c) => c.notNull())
      .addColumn("human_did", "text", (c) => c.notNull())
      .addColumn("resource", "text", (c) => c.notNull())
      .addColumn("exclusive", "boolean", (c) => c.notNull())
      .addColumn("claimed_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    // The one-claim-per-human policy: at most one exclusive claim per human, enforced by the insert itself.
    await db.schema
      .createIndex("claims_one_per_human")
      .on("claims")
      .column("human_id")
      .unique()
      .where(sql.ref("exclusive"), "=", true)
      .execute();
  },
};
