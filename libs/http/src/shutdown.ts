import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";

export interface GracefulShutdownOptions {
  /**
   * How long the service keeps serving after the signal, with `onSignal` already called (its /readyz failing): the
   * time a load balancer or proxy needs to stop sending it new requests before the server closes.
   */
  drainMs?: number;
  /** Called at once on the signal, before the drain: e.g. what makes /readyz answer 503. */
  onSignal?(): void;
  /** Bound of the closers (after the drain): a step that hangs longer makes the process exit 1. */
  timeoutMs?: number;
}

/**
 * On SIGTERM or SIGINT: fail readiness (`onSignal`) and keep serving for `drainMs`, then stop taking requests and
 * drain them (closers[0] is usually `app.close`), then stop consumers and relays, then close pools, each in order;
 * exits non-zero when a step fails or hangs.
 */
export function installGracefulShutdown(
  logger: Logger,
  closers: Array<[string, () => Promise<unknown>]>,
  { drainMs = 0, onSignal, timeoutMs = 15_000 }: GracefulShutdownOptions = {},
): void {
  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    onSignal?.();
    logger.info({ signal, drainMs }, "shutting down: not ready, serving until the drain ends");
    const timer = setTimeout(() => {
      logger.error({ timeoutMs }, "shutdown did not finish in time; exiting");
      process.exit(1);
    }, drainMs + timeoutMs);
    timer.unref();
    await sleep(drainMs);
    let failed = false;
    for (const [name, close] of closers) {
      try {
        await close();
      } catch (e) {
        failed = true;
        logger.error({ err: (e as Error).message, step: name }, "shutdown step failed");
      }
    }
    logger.info("stopped");
    process.exit(failed ? 1 : 0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}
