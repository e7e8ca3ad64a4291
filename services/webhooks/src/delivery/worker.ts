import type { Kysely } from "@humanpass/db";
import { signWebhook } from "@humanpass/events";
import type { Logger } from "@humanpass/telemetry";
import type { Clock } from "../clock.ts";
import { type ClaimedDelivery, claimDue, recordOutcome } from "../db/deliveries.ts";
import type { WebhooksDb } from "../db/schema.ts";
import type { AddressPolicy } from "./address-policy.ts";
import { retryDelayMs } from "./backoff.ts";
import { createDeliveryMetrics, type DeliveryMetrics } from "./metrics.ts";
import { send } from "./send.ts";

export interface DeliveryWorkerOptions {
  db: Kysely<WebhooksDb>;
  policy: AddressPolicy;
  logger: Logger;
  clock: Clock;
  /** Retries go on for this long after the first attempt, then the delivery is dead-lettered (≥ 24 h). */
  retryWindowMs: number;
  requestTimeoutMs: number;
  /** Deliveries attempted at once by one worker. */
  batchSize: number;
  /** How long an attempt may hold its delivery before another worker takes it up. */
  leaseMs?: number;
  /** Counters of attempts, retries and dead letters (default: on the global OpenTelemetry meter). */
  metrics?: DeliveryMetrics;
}

export interface DeliveryWorker {
  /** One round: every delivery due now (up to the batch size) attempted once. Resolves with how many. */
  runOnce(): Promise<number>;
  /** Rounds until stopped, pausing `idleMs` whenever nothing was due. */
  start(idleMs: number): void;
  stop(): Promise<void>;
}

export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { db, policy, logger, clock } = options;
  const leaseMs = options.leaseMs ?? options.requestTimeoutMs * 3;
  const deliveryMetrics = options.metrics ?? createDeliveryMetrics();

  async function attempt(claim: ClaimedDelivery): Promise<void> {
    const body = JSON.stringify(claim.event);
    const sentAt = clock();
    const headers = signWebhook({ id: claim.eventId, timestamp: sentAt, body, secrets: claim.secrets });
    const result = await send(policy, claim.url, body, headers, options.requestTimeoutMs);
    const now = clock();
    if (result.ok) {
      deliveryMetrics.attempts.add(1, { outcome: "delivered" });
      await recordOutcome(db, claim, { delivered: now });
      return;
    }
    deliveryMetrics.attempts.add(1, { outcome: result.refused ? "refused" : "failed" });
    const retryAt = new Date(now.getTime() + retryDelayMs(claim.attempt));
    if (retryAt.getTime() - claim.retryingSince.getTime() > options.retryWindowMs) {
      deliveryMetrics.deadLetters.add(1);
      logger.warn(
        { endpoint: claim.endpointId, event: claim.eventId, attempts: claim.attempt, error: result.detail },
        "webhook dead-lettered: replay it from the admin API",
      );
      await recordOutcome(db, claim, { error: result.detail, dead: true });
      return;
    }
    deliveryMetrics.retries.add(1);
    await recordOutcome(db, claim, { error: result.detail, retryAt });
  }

  async function runOnce(): Promise<number> {
    const claims = await claimDue(db, clock(), leaseMs, options.batchSize);
    await Promise.all(claims.map(attempt));
    return claims.length;
  }

  const stopping = new AbortController();
  let loop: Promise<void> | undefined;
  return {
    runOnce,
    start(idleMs) {
      loop = (async () => {
        while (!stopping.signal.aborted) {
          const attempted = await runOnce().catch((e: Error) => {
            logger.warn({ err: e.message }, "webhook delivery round failed");
            return 0;
          });
          if (attempted === 0) await sleep(idleMs, stopping.signal);
        }
      })();
    },
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
