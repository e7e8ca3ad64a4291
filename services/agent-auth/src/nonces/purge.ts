import type { PeriodicJob } from "@humanpass/service";
import type { NonceStore } from "./nonce-store.ts";

/** Nonces past their lifetime, every `intervalMs` (NONCE_PURGE_INTERVAL_MS). */
export function noncePurgeJob(nonces: NonceStore, intervalMs: number): PeriodicJob {
  return {
    name: "expired nonces",
    counter: {
      name: "humanpass_agent_auth_nonces_purged_rows_total",
      description: "Challenge nonces deleted past their lifetime",
    },
    intervalMs,
    deleteBatch: (limit) => nonces.purgeExpired(limit),
  };
}
