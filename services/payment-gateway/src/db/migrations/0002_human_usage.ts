import { type Migration, sql } from "@humanpass/db";

export const humanUsageMigration: Migration = {
  async up(db) {
    await db.schema
      .createTable("human_usage")
      .addColumn("human_id", "text", (c) => c.notNull())
      .addColumn("scope", "text", (c) => c.notNull())
      .addColumn("count", "integer", (c) => c.notNull().check(sql`count >= 0`))
      .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .addPrimaryKeyConstraint("human_usage_pkey", ["human_id", "scope"])
      .execute();
    await db.schema
      .createTable("used_proof_nonces")
      .addColumn("nonce", "text", (c) => c.primaryKey())
      .addColumn("expires_at", "timestamptz", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("used_proof_nonces_expires_at")
      .on("used_proof_nonces")
      .column("expires_at")
      .execute();
  },
};
