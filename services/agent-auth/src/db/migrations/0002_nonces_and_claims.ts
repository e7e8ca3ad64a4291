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

    // The one-claim-per-human policy: the primary key refuses a second claim of the same human in the insert itself.
    await db.schema
      .createTable("human_claims")
      .addColumn("human_id", "text", (c) => c.primaryKey())
      .addColumn("path", "text", (c) => c.notNull().check(sql`path in ('helper', 'direct')`))
      .addColumn("agent_did", "text", (c) => c.notNull())
      .addColumn("agent_address", "text", (c) => c.notNull())
      .addColumn("human_did", "text", (c) => c.notNull())
      .addColumn("claimed_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
};
