import { createPool } from "@humanpass/db";
import type pg from "pg";
import { SCHEMA } from "../config";

/**
 * The pool the routes read through. Its statements are written for generic plans (literal predicates matching the
 * partial indexes, one row per request from `unnest`), so its sessions always use them: left to choose, Postgres
 * compares the generic plan's cost, estimated on guessed array lengths, with the first custom plans' and can keep
 * planning every execution, which for a lookup of one costs several times running it. JIT is off: a batched
 * lookup's generic plan can cross `jit_above_cost`, and compiling it then costs far more than running it.
 */
export function createReadPool(options: {
  connectionString: string;
  max?: number;
  applicationName?: string;
}): pg.Pool {
  return createPool({
    connectionString: options.connectionString,
    schema: SCHEMA,
    max: options.max,
    applicationName: options.applicationName,
    settings: { jit: "off", plan_cache_mode: "force_generic_plan" },
  });
}
