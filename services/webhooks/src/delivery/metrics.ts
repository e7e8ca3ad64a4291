import { type Kysely, sql } from "@humanpass/db";
import { type Counter, type Meter, metrics, type UpDownCounter } from "@opentelemetry/api";
import type { WebhooksDb } from "../db/schema.ts";

export interface DeliveryMetrics {
  /** Attempts by `outcome`: delivered (2xx), failed (any other answer, none, a timeout), refused (the address). */
  attempts: Counter;
  retries: Counter;
  deadLetters: Counter;
  /** Attempts this replica has in flight. */
  inFlight: UpDownCounter;
}

const OUTCOMES = ["delivered", "failed", "refused"] as const;

/**
 * The delivery counters on `meter`: the service's own when it has one, the global OpenTelemetry meter otherwise
 * (a no-op until a MeterProvider is registered). Exported at 0 from the start, so that an alert on their increase
 * has a series before the first failure.
 */
export function createDeliveryMetrics(
  meter: Meter = metrics.getMeter("@humanpass/webhooks"),
): DeliveryMetrics {
  const counters = {
    attempts: meter.createCounter("humanpass.webhooks.attempts", {
      description: "delivery attempts, by outcome (delivered, failed, refused)",
    }),
    retries: meter.createCounter("humanpass.webhooks.retries", {
      description: "failed attempts scheduled to be tried again",
    }),
    deadLetters: meter.createCounter("humanpass.webhooks.dead_letters", {
      description: "deliveries given up after the retry window, kept per endpoint for replay",
    }),
    inFlight: meter.createUpDownCounter("humanpass.webhooks.attempts_in_flight", {
      description: "delivery attempts this replica has in flight (at most WEBHOOK_CONCURRENCY)",
    }),
  };
  for (const outcome of OUTCOMES) counters.attempts.add(0, { outcome });
  counters.retries.add(0);
  counters.deadLetters.add(0);
  counters.inFlight.add(0);
  return counters;
}

/**
 * `humanpass_webhooks_pending_deliveries{state}` (`new`: never attempted; `retrying`: attempted, due again later),
 * `humanpass_webhooks_oldest_pending_delivery_age_seconds` and `humanpass_webhooks_saturated_endpoints` (endpoints
 * holding as many attempts in flight, over all replicas, as `endpointConcurrency` allows: receivers that answer
 * slowly or not at all), read from the table when metrics are collected (partial indexes keep it cheap). Every
 * replica reports what they share.
 */
export function observeDeliveries(meter: Meter, db: Kysely<WebhooksDb>, endpointConcurrency: number): void {
  const pending = meter.createObservableGauge("humanpass_webhooks_pending_deliveries", {
    description: "Deliveries neither delivered nor dead-lettered, by state (new, retrying)",
  });
  const oldest = meter.createObservableGauge("humanpass_webhooks_oldest_pending_delivery_age_seconds", {
    description: "Time since the oldest pending delivery was first due (0 when none)",
    unit: "s",
  });
  const saturated = meter.createObservableGauge("humanpass_webhooks_saturated_endpoints", {
    description:
      "Endpoints with as many attempts in flight as WEBHOOK_ENDPOINT_CONCURRENCY allows (slow or silent receivers)",
  });
  meter.addBatchObservableCallback(
    async (result) => {
      const { rows } = await sql<{ new: string; retrying: string; age: number | null; saturated: string }>`
        select count(*) filter (where attempts = 0) as new, count(*) filter (where attempts > 0) as retrying,
          extract(epoch from now() - min(retrying_since))::float8 as age,
          (select count(*) from (
            select 1 from deliveries where leased_until > now()
            group by endpoint_id having count(*) >= ${endpointConcurrency}) s) as saturated
        from deliveries where status = 'pending'`.execute(db);
      result.observe(pending, Number(rows[0]?.new ?? 0), { state: "new" });
      result.observe(pending, Number(rows[0]?.retrying ?? 0), { state: "retrying" });
      result.observe(oldest, Math.max(0, rows[0]?.age ?? 0));
      result.observe(saturated, Number(rows[0]?.saturated ?? 0));
    },
    [pending, oldest, saturated],
  );
}
