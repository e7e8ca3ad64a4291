import { type Kysely, sql } from "@humanpass/db";
import { createWebhookSecret } from "@humanpass/events";
import type { WebhooksDb } from "./schema.ts";

export interface Endpoint {
  id: string;
  url: string;
  eventTypes: string[];
  createdAt: string;
}

const view = (r: { id: string; url: string; event_types: string[]; created_at: Date }): Endpoint => ({
  id: r.id,
  url: r.url,
  eventTypes: r.event_types,
  createdAt: r.created_at.toISOString(),
});

export async function createEndpoint(
  db: Kysely<WebhooksDb>,
  input: { url: string; eventTypes: string[] },
  now: Date,
): Promise<Endpoint & { secret: string }> {
  const secret = createWebhookSecret();
  const row = await db
    .insertInto("endpoints")
    .values({ url: input.url, event_types: input.eventTypes, secrets: [secret], created_at: now })
    .returning(["id", "url", "event_types", "created_at"])
    .executeTakeFirstOrThrow();
  return { ...view(row), secret };
}

export async function listEndpoints(db: Kysely<WebhooksDb>): Promise<Endpoint[]> {
  const rows = await db
    .selectFrom("endpoints")
    .select(["id", "url", "event_types", "created_at"])
    .orderBy("created_at")
    .execute();
  return rows.map(view);
}

export async function deleteEndpoint(db: Kysely<WebhooksDb>, id: string): Promise<boolean> {
  const result = await db.deleteFrom("endpoints").where("id", "=", id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * A new secret signs first; the one signing until now keeps signing beside it, so receivers switch when they are
 * ready. Older secrets are dropped: one rotation at a time.
 */
export async function rotateSecret(db: Kysely<WebhooksDb>, id: string): Promise<string | undefined> {
  const secret = createWebhookSecret();
  const row = await db
    .updateTable("endpoints")
    .set({ secrets: sql<string[]>`array[${secret}, secrets[1]]` })
    .where("id", "=", id)
    .returning("id")
    .executeTakeFirst();
  return row ? secret : undefined;
}

/** Ends a rotation: only the newest secret signs from now on. */
export async function retirePreviousSecrets(db: Kysely<WebhooksDb>, id: string): Promise<boolean> {
  const row = await db
    .updateTable("endpoints")
    .set({ secrets: sql<string[]>`secrets[1:1]` })
    .where("id", "=", id)
    .returning("id")
    .executeTakeFirst();
  return row !== undefined;
}
