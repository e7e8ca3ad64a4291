import type { Logger } from "@humanpass/telemetry";

/**
 * Runs `purge` at most once per `intervalMs`, when called from a request path, without making the request wait:
 * rows past their expiry are refused for it anyway, so their deletion can lag. A failure is logged.
 */
export function throttledPurge(
  purge: (now: Date) => Promise<unknown>,
  what: string,
  logger: Logger,
  intervalMs = 60_000,
): () => void {
  let last = 0;
  return () => {
    const now = Date.now();
    if (now - last < intervalMs) return;
    last = now;
    purge(new Date(now)).catch((error) => logger.warn({ err: error }, `${what} could not be purged`));
  };
}
