import { createPool } from "@humanpass/db";
import type pg from "pg";
import { SCHEMA } from "../config";

/**
 * The pool the routes read through. JIT is off for its sessions: a batched lookup's generic plan is costed on
 * guessed row counts and can cross `jit_above_cost`, and compiling it then costs far more than running it.
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
    settings: { jit: "off" },
  });
}
