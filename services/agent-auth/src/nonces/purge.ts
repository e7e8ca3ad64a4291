import type { Logger } from "@humanpass/telemetry";
import type { NonceStore } from "./nonce-store.ts";

/** Deletes expired nonces every `intervalMs`; a failed round is logged and the next one tries again. */
export function startNoncePurge(
  nonces: NonceStore,
  intervalMs: number,
  logger: Logger,
): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = nonces
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
