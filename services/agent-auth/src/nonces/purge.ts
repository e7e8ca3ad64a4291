import type { Logger } from "@humanpass/telemetry";

/** Deletes expired nonce redemptions every `intervalMs`; a failed round is logged and the next one tries again. */
export function startNoncePurge(
  redemptions: { purgeExpired(): Promise<number> },
  intervalMs: number,
  logger: Logger,
): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = redemptions
      .purgeExpired()
      .then((n) => n > 0 && logger.debug({ purged: n }, "expired nonces deleted"))
      .catch((e) => logger.warn({ err: (e as Error).message }, "expired nonces could not be deleted"));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
