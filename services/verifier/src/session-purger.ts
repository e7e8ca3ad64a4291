import type { Kysely } from "@humanpass/db";
import type { Clock, PeriodicJob } from "@humanpass/service";
import type { VerifierDatabase } from "./db/schema.ts";
import { purgeExpiredSessions } from "./db/sessions.ts";

/** Sessions expired more than `retentionMs` ago. */
export function sessionPurgeJob(options: {
  db: Kysely<VerifierDatabase>;
  clock: Clock;
  retentionMs: number;
}): PeriodicJob {
  return {
    name: "expired sessions",
    counter: {
      name: "humanpass_verifier_sessions_purged_rows_total",
      description: "Verification sessions deleted SESSION_RETENTION_SECONDS after they expired",
    },
    deleteBatch: (limit) =>
      purgeExpiredSessions(options.db, new Date(options.clock()), options.retentionMs, limit),
  };
}
