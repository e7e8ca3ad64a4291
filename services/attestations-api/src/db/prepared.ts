import { createHash } from "node:crypto";
import type { CompiledQuery, Kysely } from "kysely";
import type pg from "pg";

/** Where the API's read queries run: a pg pool of its own, so statements can be prepared (kysely's cannot). */
export type ReadPool = Pick<pg.Pool, "query">;

const names = new Map<string, string>();

function statementName(sqlText: string): string {
  let name = names.get(sqlText);
  if (!name) {
    name = `q${createHash("sha1").update(sqlText).digest("hex").slice(0, 20)}`;
    names.set(sqlText, name);
  }
  return name;
}

/**
 * Runs a query built with kysely as a named prepared statement: each pooled connection parses it once and
 * Postgres switches to a cached generic plan after a few runs, so the hot lookups skip planning, which costs more
 * than executing them. The set of distinct texts is small (one per combination of filters).
 */
export async function runPrepared<R>(
  reader: { db: Kysely<any>; pool?: ReadPool },
  query: { compile(): CompiledQuery<R> },
): Promise<R[]> {
  const compiled = query.compile();
  const { pool } = reader;
  // Without a pool of its own (tests of other services build the app on one kysely instance), plain queries.
  if (!pool) return (await reader.db.executeQuery(compiled)).rows;
  const result = await pool.query({
    name: statementName(compiled.sql),
    text: compiled.sql,
    values: compiled.parameters as unknown[],
  });
  return result.rows as R[];
}
