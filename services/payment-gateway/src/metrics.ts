import { AsyncLocalStorage } from "node:async_hooks";
import type { PoUVerifier } from "@humanpass/human-proof";
import type { Counter, Meter } from "@humanpass/telemetry";
import type { PaymentGateObserver } from "@humanpass/x402-fastify";
import type { FacilitatorClient } from "@x402/core/server";

const SETTLEMENT_BUCKETS_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** The tier a payment was for: `human` when its requirements ask for attestations. */
function tierOf(requirements: { extra?: Record<string, unknown> } | undefined): string {
  if (!requirements) return "unknown";
  const required = (requirements.extra as { requiredAttestations?: unknown[] } | undefined)
    ?.requiredAttestations;
  return required && required.length > 0 ? "human" : "standard";
}

/**
 * The gateway's payment series, from the payment gate's observer: payments by route template, tier and outcome
 * (`max_use_exceeded` being the refusal of a human tier whose quota is spent) and settlement duration.
 */
export function paymentObserver(meter: Meter): PaymentGateObserver {
  const payments = meter.createCounter("humanpass_payment_gateway_payments_total", {
    description: "Requests that carried a payment, by route template, tier and outcome",
    unit: "{payment}",
  });
  const settlement = meter.createHistogram("humanpass_payment_gateway_settlement_duration_seconds", {
    description: "Settlement of a verified payment with the facilitator, by outcome",
    unit: "s",
    advice: { explicitBucketBoundaries: SETTLEMENT_BUCKETS_SECONDS },
  });
  return {
    outcome(request, outcome, { requirements, reason }) {
      const refusedQuota = outcome === "refused" && reason === "max_use_exceeded";
      payments.add(1, {
        // The template of the configured route: never the raw path.
        route: request.routeOptions.url ?? "unmatched",
        tier: refusedQuota ? "human" : tierOf(requirements),
        outcome: refusedQuota ? "max_use_exceeded" : outcome,
      });
    },
    settlement(seconds, settled) {
      settlement.record(seconds, { outcome: settled ? "settled" : "failed" });
    },
  };
}

/** The facilitator, its failed calls (thrown: unreachable, timed out, no usable answer) counted by operation. */
export function countFacilitatorErrors(facilitator: FacilitatorClient, meter: Meter): FacilitatorClient {
  const errors = meter.createCounter("humanpass_payment_gateway_facilitator_errors_total", {
    description: "Facilitator calls that threw, by operation (verify, settle)",
  });
  // At 0 from the start: an alert on their increase needs the series before the first error.
  for (const operation of ["verify", "settle"]) errors.add(0, { operation });
  const counted =
    <A extends unknown[], R>(operation: string, call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args);
      } catch (error) {
        errors.add(1, { operation });
        throw error;
      }
    };
  return {
    verify: counted("verify", facilitator.verify.bind(facilitator)),
    settle: counted("settle", facilitator.settle.bind(facilitator)),
    getSupported: facilitator.getSupported.bind(facilitator),
  };
}

/**
 * Counts the human lookups of a caching verifier: `hit` answered from the cache, `miss` asked the attestations
 * API, `error` when that failed. `cached` builds the caching verifier around the counting inner one.
 */
export function countedLookups<V extends PoUVerifier>(
  meter: Meter,
  inner: PoUVerifier,
  cached: (inner: PoUVerifier) => V,
): V {
  const lookups: Counter = meter.createCounter("humanpass_payment_gateway_human_lookups_total", {
    description: "Human look-ups of agent DIDs: hit (cache), miss (asked the attestations API), error",
    unit: "{lookup}",
  });
  const asked = new AsyncLocalStorage<{ missed: boolean }>();
  const counting: PoUVerifier = {
    ...inner,
    ownershipSchema: inner.ownershipSchema,
    lookupHuman: (did, chainId) => {
      const call = asked.getStore();
      if (call) call.missed = true;
      return inner.lookupHuman(did, chainId);
    },
  };
  const outer = cached(counting);
  const lookupHuman = outer.lookupHuman.bind(outer);
  outer.lookupHuman = (did, chainId) => {
    const call = { missed: false };
    return asked
      .run(call, () => lookupHuman(did, chainId))
      .then(
        (result) => {
          lookups.add(1, { result: call.missed ? "miss" : "hit" });
          return result;
        },
        (error: unknown) => {
          lookups.add(1, { result: "error" });
          throw error;
        },
      );
  };
  return outer;
}
