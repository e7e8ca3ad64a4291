import type { PostgresHumanProofStore } from "@humanpass/human-proof/postgres";
import type { PeriodicJob } from "@humanpass/service";

/**
 * Used proof nonces, recorded uses and payment claims past their expiry. Rows past their expiry are refused for it
 * anyway, so their deletion can wait for the next round.
 */
export function humanProofPurgeJob(store: Pick<PostgresHumanProofStore, "purgeExpired">): PeriodicJob {
  return {
    name: "expired proof nonces and payment reservations",
    counter: {
      name: "humanpass_payment_gateway_human_proof_purged_rows_total",
      description: "Used proof nonces, proof uses and payment reservations deleted past their expiry",
    },
    deleteBatch: (limit) => store.purgeExpired(new Date(), limit),
  };
}
