import { isDatabaseUnavailable, type Pool } from "@humanpass/db";
import { type OutboxEvent, outboxRows, type Topology } from "@humanpass/event-bus";
import {
  type AdmissionOutcome,
  type HumanProofEvent,
  maxUseExceededEvent,
  type ProofAdmission,
  type ProofAdmissions,
} from "@humanpass/human-proof";
import type { Logger } from "@humanpass/telemetry";
import { checkedPaymentEvent, paymentEventOf } from "../events/payment-events.ts";
import { DUPLICATE_PAYMENT } from "../x402/reserve-authorization.ts";
import { throttledPurge } from "./expiry-purge.ts";
import { authorizationOf, type PostgresPaymentReservations } from "./payment-reservations.ts";

/**
 * The admission of one proof, its values: nonce, expiry, human, scope, whether a use is counted, maxUse, events,
 * then the payment's claim (network, asset, payer, authorization nonce, validBefore; nulls for none).
 */
const ADMIT = `
with fresh as (
  insert into used_proof_nonces (nonce, expires_at) values ($1, $2)
  on conflict (nonce) do nothing
  returning nonce
), used as (
  insert into human_usage as u (human_id, scope, count)
  select $3, $4, 1 from fresh
  where $5::boolean and $6::integer >= 1
  on conflict (human_id, scope) do update set count = u.count + 1, updated_at = now()
    where u.count < $6::integer
  returning u.count
), claimed as (
  insert into payment_reservations (network, asset, payer, nonce, expires_at)
  select $8::text, $9::text, $10::text, $11::text, $12::timestamptz from fresh
  where $8::text is not null and (not $5::boolean or exists (select from used))
  on conflict do nothing
  returning nonce
), written as (
  insert into outbox (id, subject, event, trace)
  select r.id, r.subject, r.event, r.trace
  from jsonb_to_recordset($7::jsonb)
    as r(id uuid, subject text, event jsonb, trace jsonb, on_refusal boolean)
  where exists (select from fresh) and (not r.on_refusal or not exists (select from used))
)
select exists (select from fresh) as fresh, (select count from used) as count,
  exists (select from claimed) as claimed`;

/**
 * Human-proof admissions shared by every gateway instance, each one statement: the proof's nonce is inserted
 * once (unique key), and only if it was new the human's counter is incremented if below `maxUse` (conditional
 * upsert) and the events go to the outbox, `max_use_exceeded` only when the counter was at its cap. One round
 * trip and one commit, and the events exist exactly when the nonce and the use do. A named prepared statement:
 * planning its CTEs costs Postgres about as much as running them.
 * With `reservations`, an admitted proof's EIP-3009 payment is claimed in the same statement, once the use is
 * taken, instead of in a statement of its own after the facilitator's verify (`reserveAuthorization`, which gives
 * the claim back if that verify fails): a copy of a payment already claimed is refused `duplicate_payment`, its
 * use given back by the hook. The human tier's payment is checked locally before (its EIP-3009 signature), so a
 * forged copy cannot claim first.
 */
export class PostgresProofAdmissions implements ProofAdmissions {
  // A proof past its expiry is refused for age before its nonce is looked at, so its row can go.
  private readonly purgeExpired: () => void;

  private readonly pool: Pick<Pool, "query">;
  private readonly topology: Topology;
  private readonly logger: Logger;

  private readonly reservations: PostgresPaymentReservations | undefined;

  constructor(
    pool: Pick<Pool, "query">,
    topology: Topology,
    logger: Logger,
    options: { reservations?: PostgresPaymentReservations; purgeIntervalMs?: number } = {},
  ) {
    const { reservations, purgeIntervalMs = 60_000 } = options;
    this.pool = pool;
    this.topology = topology;
    this.logger = logger;
    this.reservations = reservations;
    this.purgeExpired = throttledPurge(
      (now) => pool.query("delete from used_proof_nonces where expires_at < $1", [now]),
      "expired proof nonces",
      logger,
      purgeIntervalMs,
    );
  }

  async admit(admission: ProofAdmission): Promise<AdmissionOutcome> {
    try {
      return await this.admitOnce(admission);
    } catch (error) {
      // The human-proof hook turns any failure into a refusal; the reason must reach the operators.
      this.logger.error(
        { err: (error as Error).message, databaseUnavailable: isDatabaseUnavailable(error) },
        "human proof not admitted: its nonce and usage could not be stored",
      );
      throw error;
    }
  }

  private async admitOnce(admission: ProofAdmission): Promise<AdmissionOutcome> {
    this.purgeExpired();
    const { nonce, nonceExpiresAt, use, resource, payment } = admission;
    const claim = this.reservations && payment && authorizationOf(payment.payload, payment.requirements);
    if (claim) this.reservations?.purgeExpired();
    const rows = [
      ...this.rows(admission.events, false),
      ...(use ? this.rows([maxUseExceededEvent(resource, use)], true) : []),
    ];
    const { rows: result } = await this.pool.query<{
      fresh: boolean;
      count: number | null;
      claimed: boolean;
    }>({
      name: "proof-admission",
      text: ADMIT,
      values: [
        nonce,
        nonceExpiresAt,
        use?.humanId ?? "",
        use?.scope ?? "",
        use !== undefined,
        use?.maxUse ?? 0,
        JSON.stringify(rows),
        claim?.network ?? null,
        claim?.asset ?? null,
        claim?.payer ?? null,
        claim?.nonce ?? null,
        claim?.expiresAt ?? null,
      ],
    });
    const { fresh, count, claimed } = result[0]!;
    if (claimed) this.reservations?.markClaimedWithAdmission(payment!.payload);
    const copy = claim && fresh && !claimed && (!use || count !== null);
    return { nonceFresh: fresh, count, ...(copy ? { paymentRefusal: DUPLICATE_PAYMENT } : {}) };
  }

  private rows(events: HumanProofEvent[], onRefusal: boolean) {
    const checked = events
      .map((event) => {
        const { type, data } = paymentEventOf(event);
        return checkedPaymentEvent(type, data, this.logger);
      })
      .filter((event): event is OutboxEvent => event !== undefined);
    return outboxRows(this.topology, checked).map((row) => ({ ...row, on_refusal: onRefusal }));
  }
}
