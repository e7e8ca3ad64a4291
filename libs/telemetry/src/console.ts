import { format } from "node:util";
import type { Logger } from "pino";

const LEVELS = { error: "error", warn: "warn", info: "info", log: "info", debug: "debug" } as const;

/**
 * Routes what libraries write with `console.*` (x402 warns with stack traces that quote the client's bytes)
 * through the logger, as lines with `source: "console"`, so they get its escaping and redaction and its JSON form
 * instead of reaching stdout and stderr raw. Returns a function that puts the console back.
 */
export function routeConsoleTo(logger: Logger): () => void {
  const log = logger.child({ source: "console" });
  const original = Object.fromEntries(
    Object.keys(LEVELS).map((name) => [name, console[name as keyof typeof LEVELS]]),
  );
  for (const [name, level] of Object.entries(LEVELS)) {
    console[name as keyof typeof LEVELS] = (...args: unknown[]) => log[level](format(...args));
  }
  return () => Object.assign(console, original);
}
