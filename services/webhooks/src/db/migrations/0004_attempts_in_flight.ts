import { type Migration, sql } from "@humanpass/db";

/**
 * Which deliveries an attempt holds right now (`leased_until`, cleared with the outcome), so that a claim counts an
 * endpoint's attempts in flight on every replica; and the due deliveries of each endpoint in order, which a claim
 * walks per endpoint, so an endpoint with a long backlog does not hide the others' due deliveries. The index of all
 * due deliveries by time goes: the planner preferred it for one endpoint's oldest rows too, filtering out every other
 * endpoint's rows on the way (a silent endpoint's whole backlog on each claim). The previous release's claim still
 * runs without it, sorting the due rows instead.
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
    await db.schema.dropIndex("deliveries_due").execute();
  },
};
