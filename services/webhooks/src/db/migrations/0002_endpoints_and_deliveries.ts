import { type Migration, sql } from "@humanpass/db";

export const endpointsAndDeliveries: Migration = {
  async up(db) {
    await db.schema
      .createTable("endpoints")
      .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("event_types", sql`text[]`, (c) => c.notNull())
      .addColumn("secrets", sql`text[]`, (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("deliveries")
      .addColumn("endpoint_id", "uuid", (c) => c.notNull().references("endpoints.id").onDelete("cascade"))
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("event", "jsonb", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("next_attempt_at", "timestamptz", (c) => c.notNull())
      .addColumn("retrying_since", "timestamptz", (c) => c.notNull())
      .addColumn("last_error", "text")
      .addColumn("delivered_at", "timestamptz")
      .addPrimaryKeyConstraint("deliveries_pkey", ["endpoint_id", "event_id"])
      .execute();
    await db.schema
      .createIndex("deliveries_due")
      .on("deliveries")
      .column("next_attempt_at")
      .where(sql.ref("status"), "=", "pending")
      .execute();
    await db.schema
      .createIndex("deliveries_dead")
      .on("deliveries")
      .columns(["endpoint_id", "next_attempt_at"])
      .where(sql.ref("status"), "=", "dead")
      .execute();
  },
};
