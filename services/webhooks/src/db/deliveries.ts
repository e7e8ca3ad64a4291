import { type Kysely, sql, type Transaction } from "@humanpass/db";
import type { CloudEvent } from "@humanpass/events";
import type { WebhooksDb } from "./schema.ts";

export interface DeliveryKey {
  endpointId: string;
  eventId: string;
}

export interface ClaimedDelivery extends DeliveryKey {
  event: CloudEvent;
  /** This attempt's number (1 on the first). */
  attempt: number;
  retryingSince: Date;
  url: string;
  secrets: string[];
}

/** One pending delivery per endpoint subscribed to `subject`; an event seen again adds nothing. */
export async function enqueueDeliveries(
  trx: Transaction<WebhooksDb>,
  subject: string,
  event: CloudEvent,
  now: Date,
): Promise<void> {
  await sql`
    insert into deliveries (endpoint_id, event_id, subject, event, status, next_attempt_at, retrying_since)
    select id, ${event.id}, ${subject}, ${JSON.stringify(event)}::jsonb, 'pending', ${now}, ${now}
    from endpoints where ${subject} = any(event_types)
    on conflict (endpoint_id, event_id) do nothing`.execute(trx);
}

/**
 * Takes up to `limit` due deliveries in one statement, the oldest first, and no more of an endpoint's than keep its
 * attempts in flight (on every replica: `leased_until`) within `perEndpoint`: a receiver that does not answer holds
 * that many attempts, never all of them. Each endpoint's due rows are walked on their own, so a long backlog at
 * one endpoint does not hide another's. A claimed row's next attempt moves to the end of the lease, so a worker
 * that dies mid-attempt leaves it to be tried again then; `SKIP LOCKED` keeps replicas off each other's rows.
 * In-flight attempts are counted in the statement's snapshot: two replicas claiming for one endpoint at the same
 * instant can together exceed the cap until one of them finishes an attempt.
 */
export async function claimDue(
  db: Kysely<WebhooksDb>,
  now: Date,
  leaseMs: number,
  limit: number,
  perEndpoint: number,
): Promise<ClaimedDelivery[]> {
  const leaseEnd = new Date(now.getTime() + leaseMs);
  const { rows } = await sql<{
    endpoint_id: string;
    event_id: string;
    event: CloudEvent;
    attempts: number;
    retrying_since: Date;
    url: string;
    secrets: string[];
  }>`
    with chosen as (
      select endpoint_id, event_id from (
        select due.endpoint_id, due.event_id, due.next_attempt_at, busy.n as busy,
          row_number() over (partition by due.endpoint_id order by due.next_attempt_at) as rank
        from endpoints e
        cross join lateral (
          select count(*) as n from deliveries f where f.endpoint_id = e.id and f.leased_until > ${now}) busy
        cross join lateral (
          select d.endpoint_id, d.event_id, d.next_attempt_at from deliveries d
          where busy.n < ${perEndpoint}
            and d.endpoint_id = e.id and d.status = 'pending' and d.next_attempt_at <= ${now}
          order by d.next_attempt_at
          limit ${perEndpoint}
          for update of d skip locked) due) ranked
      where rank + busy <= ${perEndpoint}
      order by next_attempt_at
      limit ${limit})
    update deliveries d set next_attempt_at = ${leaseEnd}, leased_until = ${leaseEnd}, attempts = d.attempts + 1
    from chosen c, endpoints e
    where d.endpoint_id = c.endpoint_id and d.event_id = c.event_id and e.id = d.endpoint_id
    returning d.endpoint_id, d.event_id, d.event, d.attempts, d.retrying_since, e.url, e.secrets`.execute(db);
  return rows.map((r) => ({
    endpointId: r.endpoint_id,
    eventId: r.event_id,
    event: r.event,
    attempt: r.attempts,
    retryingSince: r.retrying_since,
    url: r.url,
    secrets: r.secrets,
  }));
}

/** Records the outcome of the attempt this worker holds; a stale claim (lease lost, row replayed) changes nothing. */
export async function recordOutcome(
  db: Kysely<WebhooksDb>,
  claim: ClaimedDelivery,
  outcome: { delivered: Date } | { error: string; retryAt: Date } | { error: string; dead: true },
): Promise<void> {
  const set =
    "delivered" in outcome
      ? {
          status: "delivered" as const,
          delivered_at: outcome.delivered,
          last_error: null,
          leased_until: null,
        }
      : "retryAt" in outcome
        ? { next_attempt_at: outcome.retryAt, last_error: outcome.error, leased_until: null }
        : { status: "dead" as const, last_error: outcome.error, leased_until: null };
  await db
    .updateTable("deliveries")
    .set(set)
    .where("endpoint_id", "=", claim.endpointId)
    .where("event_id", "=", claim.eventId)
    .where("status", "=", "pending")
    .where("attempts", "=", claim.attempt)
    .execute();
}

export interface DeadLetterRow {
  eventId: string;
  subject: string;
  attempts: number;
  lastError: string | null;
  event: CloudEvent;
}

export async function listDeadLetters(
  db: Kysely<WebhooksDb>,
  endpointId: string,
  limit: number,
): Promise<DeadLetterRow[]> {
  const rows = await db
    .selectFrom("deliveries")
    .select(["event_id", "subject", "attempts", "last_error", "event"])
    .where("endpoint_id", "=", endpointId)
    .where("status", "=", "dead")
    .orderBy("next_attempt_at")
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    eventId: r.event_id,
    subject: r.subject,
    attempts: r.attempts,
    lastError: r.last_error,
    event: r.event as CloudEvent,
  }));
}

/** Puts an endpoint's dead letters (all, or the listed event ids) back in line, with a fresh retry window. */
export async function replayDeadLetters(
  db: Kysely<WebhooksDb>,
  endpointId: string,
  now: Date,
  eventIds?: string[],
): Promise<string[]> {
  let query = db
    .updateTable("deliveries")
    .set({ status: "pending", attempts: 0, next_attempt_at: now, retrying_since: now, leased_until: null })
    .where("endpoint_id", "=", endpointId)
    .where("status", "=", "dead");
  if (eventIds) query = query.where("event_id", "in", eventIds.length > 0 ? eventIds : [""]);
  return (await query.returning("event_id").execute()).map((r) => r.event_id);
}
