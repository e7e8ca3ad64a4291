import { createPool } from "@humanpass/db";
import type pg from "pg";
import { DEFAULT_READ_TIMEOUT_MS, SCHEMA } from "../config";

/**
 * The pool the routes read through. Its statements are written for generic plans (literal predicates matching the
 * partial indexes, one row per request from `unnest`), so its sessions always use them: left to choose, Postgres
 * compares the generic plan's cost, estimated on guessed array lengths, with the first custom plans' and can keep
 * planning every execution, which for a lookup of one costs several times running it. JIT is off: a batched
 * lookup's generic plan can cross `jit_above_cost`, and compiling it then costs far more than running it.
 * Statements are cancelled after a timeout: a page far down a long list is read by skipping every row before it,
 * and one such request must not hold a connection, and a share of Postgres, for as long as it likes.
 */
export function createReadPool(options: {
  connectionString: string;
  max?: number;
  applicationName?: string;
  /** How long a statement may run before Postgres cancels it; the request then gets a 503 (see `execute`). */
  statementTimeoutMs?: number;
}): pg.Pool {
  return createPool({
    connectionString: options.connectionString,
    schema: SCHEMA,
    max: options.max,
    applicationName: options.applicationName,
    settings: {
      jit: "off",
      plan_cache_mode: "force_generic_plan",
      statement_timeout: String(options.statementTimeoutMs ?? DEFAULT_READ_TIMEOUT_MS),
    },
  });
}
