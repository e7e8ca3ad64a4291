import { type Migration, sql } from "@humanpass/db";

/**
 * Which deliveries an attempt holds right now (`leased_until`, cleared with the outcome), so that a claim counts an
 * endpoint's attempts in flight on every replica; and the due deliveries of each endpoint in order, which a claim
 * walks per endpoint, so an endpoint with a long backlog does not hide the others' due deliveries.
 */
export const attemptsInFlight: Migration = {
  async up(db) {
    await sql`alter table deliveries add column leased_until timestamptz`.execute(db);
    await db.schema
      .createIndex("deliveries_due_by_endpoint")
      .on("deliveries")
      .columns(["endpoint_id", "next_attempt_at"])
      .where(sql.ref("status"), "=", "pending")
      .execute();
    await db.schema
      .createIndex("deliveries_in_flight")
      .on("deliveries")
      .columns(["endpoint_id", "leased_until"])
      .where(sql.ref("leased_until"), "is not", null)
      .execute();
  },
};
