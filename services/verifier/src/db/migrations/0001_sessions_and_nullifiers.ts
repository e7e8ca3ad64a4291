import { type Migration, sql } from "@humanpass/db";

export const sessionsAndNullifiers: Migration = {
  async up(db) {
    await db.schema
      .createTable("sessions")
      .addColumn("session_id", "bigint", (c) => c.primaryKey())
      .addColumn("request", "jsonb", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('pending', 'success')`))
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .addColumn("expires_at", "timestamptz", (c) => c.notNull())
      .addColumn("verified_at", "timestamptz")
      .execute();
    await db.schema.createIndex("sessions_expires_at").on("sessions").column("expires_at").execute();
    // One row per person and campaign: the primary key is the uniqueness guarantee across all instances.
    await db.schema
      .createTable("nullifiers")
      .addColumn("nullifier_session_id", "text", (c) =>
        c.notNull().check(sql`nullifier_session_id ~ '^[0-9]+$'`),
      )
      .addColumn("nullifier", "text", (c) => c.notNull().check(sql`nullifier ~ '^[0-9]+$'`))
      .addColumn("session_id", "bigint", (c) => c.notNull())
      .addColumn("user_did", "text", (c) => c.notNull())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("verified_at", "timestamptz", (c) => c.notNull())
      .addPrimaryKeyConstraint("nullifiers_pkey", ["nullifier_session_id", "nullifier"])
      .execute();
  },
};
