import type { Kysely } from "@humanpass/db";
import type { Clock } from "@humanpass/service";
import type { Logger } from "@humanpass/telemetry";
import type { VerifierDatabase } from "./db/schema.ts";
import { purgeExpiredSessions } from "./db/sessions.ts";

/** Deletes long-expired sessions periodically; a single DELETE, so every replica may run it. */
export function startSessionPurger(options: {
  db: Kysely<VerifierDatabase>;
  clock: Clock;
  retentionMs: number;
  intervalMs?: number;
  logger: Logger;
}): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = purgeExpiredSessions(options.db, new Date(options.clock()), options.retentionMs).then(
      (purged) => purged > 0 && options.logger.info({ purged }, "expired sessions purged"),
      (error: Error) => options.logger.warn({ err: error.message }, "purging expired sessions failed"),
    );
  }, options.intervalMs ?? 60_000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
