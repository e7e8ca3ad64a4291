import { DEFAULT_READ_TIMEOUT_MS } from "../config.ts";

/**
 * The session settings of the service's pool. Reads run cached generic plans only: their statements are written
 * for them (literal `not a.revoked` matching the partial indexes), and left to choose, Postgres compares a generic
 * plan's estimated cost with the first custom plans' and can keep planning every execution. JIT is off: compiling
 * a plan that crosses `jit_above_cost` costs more than running it. Every statement is cancelled after
 * `statementTimeoutMs`: a page far down a long list is read by skipping every row before it, and one such request
 * must not hold a connection, and a share of Postgres, for as long as it likes.
 */
export function readSessionSettings(statementTimeoutMs = DEFAULT_READ_TIMEOUT_MS): Record<string, string> {
  return { jit: "off", plan_cache_mode: "force_generic_plan", statement_timeout: String(statementTimeoutMs) };
}
