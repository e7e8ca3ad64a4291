import { createHash } from "node:crypto";
import { maxUseExceededEvent, REFUND_GRACE_MS } from "../server/admissions.ts";
import { DUPLICATE_PAYMENT } from "../server/payment-guards.ts";
import {
  authorizationOf,
  type PaymentAuthorization,
  type PaymentReservations,
} from "../server/payment-reservations.ts";
import type { AdmissionOutcome, HumanProofEvent, ProofAdmission, ProofAdmissions } from "../server/types.ts";
import type { Queryable } from "./schema.ts";
import { CONSUME_NONCE_SQL, purgeExpiredSql } from "./used-nonces.ts";

/**
 * Where an admission's events go in the admission's own statement (an outbox, say), so that they exist exactly
 * when the nonce and the use do.
 */
export interface AdmissionEventsWriter {
  /** The rows to write for `events` (JSON-serialisable), handed to `insert` as one jsonb array parameter. */
  rows(events: HumanProofEvent[]): unknown[];
  /**
   * The data-modifying statement (it becomes a CTE) inserting the rows of the jsonb array `rows` (SQL text such as
   * `$12::jsonb`) in their order, only where the SQL boolean `condition` holds.
   */
  insert(rows: string, condition: string): string;
}

export type PostgresHumanProofStoreOptions = {
  /** Records each fresh admission's events in its statement; none by default (the hook's `onEvent` still gets them). */
  events?: AdmissionEventsWriter;
};

const FRESH = "exists (select from fresh)";
const REFUSED_USE = `${FRESH} and $5::boolean and not exists (select from used)`;

/**
 * The admission in one statement: the nonce inserted once (unique key); only if it was new, the human's counter
 * incremented if below `maxUse` (conditional upsert) and that use recorded under the nonce, the payment claimed
 * (unique key; after the use, so a payment refused at the cap claims nothing), and the events written.
 */
function admissionSql(events: AdmissionEventsWriter | undefined): string {
  const writes = events
    ? `, written as (${events.insert("$13::jsonb", FRESH)}), refused as (${events.insert("$14::jsonb", REFUSED_USE)})`
    : "";
  return `
with fresh as (
  ${CONSUME_NONCE_SQL}
), used as (
  insert into human_usage as u (human_id, scope, count)
  select $3, $4, 1 from fresh
  where $5::boolean and $6::integer >= 1
  on conflict (human_id, scope) do update set count = u.count + 1, updated_at = now()
    where u.count < $6::integer
  returning u.count
), taken as (
  insert into proof_uses (nonce, human_id, scope, expires_at)
  select $1, $3, $4, $12::timestamptz from used
), claimed as (
  insert into payment_reservations (network, asset, payer, nonce, expires_at, claimed_by)
  select $7::text, $8::text, $9::text, $10::text, $11::timestamptz, $1 from fresh
  where $7::text is not null and (not $5::boolean or exists (select from used))
  on conflict do nothing
  returning nonce
)${writes}
select exists (select from fresh) as fresh, (select count from used) as count,
  exists (select from claimed) as claimed`;
}

// The use a proof took goes back once: its row is deleted by the statement that decrements.
const REFUND = `
with taken as (delete from proof_uses where nonce = $1 returning human_id, scope)
update human_usage u set count = u.count - 1, updated_at = now()
from taken where u.human_id = taken.human_id and u.scope = taken.scope and u.count > 0`;

// A claim is granted again to the claimant that holds it (the request whose proof's admission took it).
const RESERVE = `
insert into payment_reservations as r (network, asset, payer, nonce, expires_at, claimed_by)
values ($1, $2, $3, $4, $5, $6)
on conflict (network, asset, payer, nonce) do update set expires_at = r.expires_at
  where r.claimed_by = excluded.claimed_by
returning 1`;

const RELEASE = `
delete from payment_reservations
where network = $1 and asset = $2 and payer = $3 and nonce = $4 and claimed_by = $5`;

const PURGED_TABLES = ["used_proof_nonces", "proof_uses", "payment_reservations"] as const;

/**
 * The human-proof stores every instance of a server shares, in Postgres (tables: `HUMAN_PROOF_STORE_SQL`, created
 * by `migrateHumanProofStore`): admissions (`admissions` of `configureHumanProofServer`: proof nonces, per-human
 * `maxUse` counters, and the refund of a failed request's use) and payment reservations (`paymentGuards:
 * { reservations }`). Every change is one statement with a unique key or a conditional update, so any number of
 * instances keep `maxUse` exact and run each payment's handler once. A proof's admission, its use and its payment's
 * claim are one round trip. Rows past their expiry are refused for it anyway; `purgeExpired` deletes them.
 */
export class PostgresHumanProofStore implements ProofAdmissions, PaymentReservations {
  private readonly pool: Queryable;
  private readonly events: AdmissionEventsWriter | undefined;
  private readonly admission: { name: string; text: string };
  // The payments this process claimed with their proof's admission, by proof nonce: the request's own claim
  // after verification is then granted without asking the database again.
  private readonly claimedWithAdmission = new Map<string, number>();

  constructor(pool: Queryable, options: PostgresHumanProofStoreOptions = {}) {
    this.pool = pool;
    this.events = options.events;
    const text = admissionSql(options.events);
    // A named prepared statement: planning its CTEs costs Postgres about as much as running them. Its name
    // follows its text, so stores writing events differently never share a name on one connection.
    const digest = createHash("sha256").update(text).digest("hex").slice(0, 12);
    this.admission = { name: `humanpass-proof-admission-${digest}`, text };
  }

  async admit(admission: ProofAdmission): Promise<AdmissionOutcome> {
    const { nonce, nonceExpiresAt, use, resource, payment } = admission;
    const claim = payment && authorizationOf(payment.payload, payment.requirements);
    const values: unknown[] = [
      nonce,
      nonceExpiresAt,
      use?.humanId ?? "",
      use?.scope ?? "",
      use !== undefined,
      use?.maxUse ?? 0,
      claim?.network ?? null,
      claim?.asset ?? null,
      claim?.payer ?? null,
      claim?.nonce ?? null,
      claim?.expiresAt ?? null,
      new Date(nonceExpiresAt.getTime() + REFUND_GRACE_MS),
    ];
    if (this.events) {
      values.push(
        JSON.stringify(this.events.rows(admission.events)),
        JSON.stringify(use ? this.events.rows([maxUseExceededEvent(resource, use)]) : []),
      );
    }
    const { rows } = await this.pool.query<{ fresh: boolean; count: number | null; claimed: boolean }>({
      ...this.admission,
      values,
    });
    const { fresh, count, claimed } = rows[0] as { fresh: boolean; count: number | null; claimed: boolean };
    if (claimed) this.rememberClaim(nonce, claim?.expiresAt ?? nonceExpiresAt);
    const copy = claim && fresh && !claimed && (!use || count !== null);
    return { nonceFresh: fresh, count, ...(copy ? { paymentRefusal: DUPLICATE_PAYMENT } : {}) };
  }

  async refund(nonce: string): Promise<void> {
    await this.pool.query(REFUND, [nonce]);
  }

  async reserve(authorization: PaymentAuthorization, claimant?: string): Promise<boolean> {
    if (claimant !== undefined && this.claimedWithAdmission.delete(claimant)) return true;
    const { network, asset, payer, nonce, expiresAt } = authorization;
    // Named: each request of the standard tier runs it, and Postgres then plans it once per connection.
    const { rows } = await this.pool.query({
      name: "humanpass-payment-reserve",
      text: RESERVE,
      values: [network, asset, payer, nonce, expiresAt, claimant ?? null],
    });
    return rows.length > 0;
  }

  async release(authorization: PaymentAuthorization, claimant: string): Promise<void> {
    this.claimedWithAdmission.delete(claimant);
    const { network, asset, payer, nonce } = authorization;
    await this.pool.query(RELEASE, [network, asset, payer, nonce, claimant]);
  }

  /** The human's count in `scope`, for operators and tests; 0 when the human never used it. */
  async count(humanId: string, scope: string): Promise<number> {
    const { rows } = await this.pool.query<{ count: number }>(
      "select count from human_usage where human_id = $1 and scope = $2",
      [humanId, scope],
    );
    return rows[0]?.count ?? 0;
  }

  /**
   * Deletes rows past their expiry (used nonces, recorded uses, payment claims), at most `limit` per table, and
   * returns how many. Call it periodically, off the request path (a timer, a job), again while it deletes `limit`
   * or more; a row left behind is refused anyway. Rows another instance's purge holds are skipped (SKIP LOCKED),
   * so instances running it at once never wait on each other.
   */
  async purgeExpired(now: Date = new Date(), limit = 5_000): Promise<number> {
    let deleted = 0;
    for (const table of PURGED_TABLES) {
      const { rowCount } = await this.pool.query(purgeExpiredSql(table), [now, limit]);
      deleted += rowCount ?? 0;
    }
    return deleted;
  }

  private rememberClaim(nonce: string, until: Date): void {
    const now = Date.now();
    // Insertion order is expiry order, near enough; a claim no hook asked for again goes when it lapses.
    for (const [claimant, expiry] of this.claimedWithAdmission) {
      if (expiry > now) break;
      this.claimedWithAdmission.delete(claimant);
    }
    this.claimedWithAdmission.set(nonce, until.getTime());
  }
}
