import type { PeriodicJob } from "@humanpass/service";

/** Nonce redemptions past their lifetime, every `intervalMs` (NONCE_PURGE_INTERVAL_MS). */
export function noncePurgeJob(
  redemptions: { purgeExpired(now?: Date, limit?: number): Promise<number> },
  intervalMs: number,
): PeriodicJob {
  return {
    name: "expired nonces",
    counter: {
      name: "humanpass_agent_auth_nonces_purged_rows_total",
      description: "Challenge nonces deleted past their lifetime",
    },
    intervalMs,
    deleteBatch: (limit) => redemptions.purgeExpired(new Date(), limit),
  };
}
