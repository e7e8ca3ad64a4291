import type { Kysely } from "@humanpass/db";
import { signWebhook } from "@humanpass/events";
import { sleep } from "@humanpass/retry";
import type { Clock } from "@humanpass/service";
import type { Logger } from "@humanpass/telemetry";
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
  /** The whole of one attempt: connection, answer and its body. */
  attemptTimeoutMs: number;
  /** Attempts in flight at once in this worker. */
  concurrency: number;
  /** Attempts in flight at once to one endpoint, over all workers. */
  endpointConcurrency: number;
  /** How long an attempt may hold its delivery before another worker takes it up. */
  leaseMs?: number;
  /** Counters of attempts, retries and dead letters (default: on the global OpenTelemetry meter). */
  metrics?: DeliveryMetrics;
}

export interface DeliveryWorker {
  /** Claims what is due now, up to the free slots, and waits for those attempts. Resolves with how many. */
  runOnce(): Promise<number>;
  /**
   * Keeps up to `concurrency` attempts in flight: claims again whenever one ends, and every `idleMs` while fewer
   * were due than there were free slots.
   */
  start(idleMs: number): void;
  /** Claims nothing more and waits for the attempts in flight (each ends by its deadline). */
  stop(): Promise<void>;
}

export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { db, policy, logger, clock } = options;
  const leaseMs = options.leaseMs ?? options.attemptTimeoutMs * 3;
  const deliveryMetrics = options.metrics ?? createDeliveryMetrics();
  const inFlight = new Set<Promise<void>>();

  async function attempt(claim: ClaimedDelivery): Promise<void> {
    const body = JSON.stringify(claim.event);
    const sentAt = new Date(clock());
    const headers = signWebhook({ id: claim.eventId, timestamp: sentAt, body, secrets: claim.secrets });
    const result = await send(policy, claim.url, body, headers, options.attemptTimeoutMs);
    const now = new Date(clock());
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

  /** Claims up to the free slots and starts an attempt for each; resolves with the attempts started. */
  async function fill(): Promise<Promise<void>[]> {
    const free = options.concurrency - inFlight.size;
    if (free <= 0) return [];
    const claims = await claimDue(db, new Date(clock()), leaseMs, free, options.endpointConcurrency);
    return claims.map((claim) => {
      deliveryMetrics.inFlight.add(1);
      const running: Promise<void> = attempt(claim)
        .catch((e: Error) =>
          // The lease runs out and the delivery is attempted again.
          logger.warn(
            { endpoint: claim.endpointId, event: claim.eventId, err: e.message },
            "webhook attempt failed",
          ),
        )
        .finally(() => {
          inFlight.delete(running);
          deliveryMetrics.inFlight.add(-1);
          wake();
        });
      inFlight.add(running);
      return running;
    });
  }

  const stopping = new AbortController();
  // Set when an attempt ends: its slot is free, and its endpoint may have room again.
  let woken = false;
  let wakeUp: AbortController | undefined;
  const wake = () => {
    woken = true;
    wakeUp?.abort();
  };
  const pause = async (ms: number) => {
    wakeUp = new AbortController();
    await sleep(ms, AbortSignal.any([stopping.signal, wakeUp.signal]));
    wakeUp = undefined;
  };

  let loop: Promise<void> | undefined;
  return {
    async runOnce() {
      const started = await fill();
      await Promise.all(started);
      return started.length;
    },
    start(idleMs) {
      loop = (async () => {
        while (!stopping.signal.aborted) {
          woken = false;
          await fill().catch((e: Error) => {
            logger.warn({ err: e.message }, "claiming webhook deliveries failed");
          });
          // The slots are full or nothing more is due: claim again once an attempt ends, or at the next look.
          if (!woken) await pause(idleMs);
        }
      })();
    },
    async stop() {
      stopping.abort();
      await loop;
      await Promise.all(inFlight);
    },
  };
}
