import type { Logger } from "pino";

/**
 * On SIGTERM or SIGINT: stop taking requests and drain them (closers[0] is usually `app.close`), then stop
 * consumers and relays, then close pools, each in order; exits non-zero when a step fails or hangs.
 */
export function installGracefulShutdown(
  logger: Logger,
  closers: Array<[string, () => Promise<unknown>]>,
  timeoutMs = 15_000,
): void {
  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, "shutting down");
    const timer = setTimeout(() => {
      logger.error({ timeoutMs }, "shutdown did not finish in time; exiting");
      process.exit(1);
    }, timeoutMs);
    timer.unref();
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
