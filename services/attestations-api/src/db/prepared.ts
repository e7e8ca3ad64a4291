import { statementName } from "@humanpass/db";
import { HttpError } from "@humanpass/http";
import { type Compilable, CompiledQuery, type Kysely } from "kysely";
import type pg from "pg";

/** Where the API's read queries run: a pg pool of its own, so statements can be prepared (kysely's cannot). */
export type ReadPool = Pick<pg.Pool, "query" | "totalCount">;

/** The read side: kysely builds the queries once, the pool runs them as prepared statements. */
export interface Reader {
  db: Kysely<any>;
  /** Without one (tests of other services build the app on one kysely instance), plain queries through `db`. */
  pool?: ReadPool;
}

/** A statement text and the name it is prepared under. */
export interface NamedStatement {
  name: string;
  sql: string;
}

/** `sql` with the name it is prepared under on every connection. */
export function named(sql: string): NamedStatement {
  return { name: statementName(sql), sql };
}

/** A query compiled once; `slots` names, in order, the argument each bound parameter takes. */
export interface Statement extends NamedStatement {
  slots: string[];
}

const MARK = "\u0000slot:";

/** A placeholder for a named argument, used where the query builder expects a value. */
export function slot(name: string): any {
  return `${MARK}${name}`;
}

const statements = new Map<string, Statement>();

/**
 * The statement `key` stands for, built and compiled on first use only: the query shapes are few (one per
 * combination of filters), and building them with kysely on every request cost more than running them.
 * Every bound parameter must be a slot, so no value can be frozen into the cached text by mistake.
 */
export function statement(key: string, build: () => Compilable): Statement {
  let found = statements.get(key);
  if (!found) {
    const compiled = build().compile();
    const slots = compiled.parameters.map((p) => {
      if (typeof p !== "string" || !p.startsWith(MARK))
        throw new Error(`statement ${key}: bound value ${String(p)} is not a slot`);
      return p.slice(MARK.length);
    });
    found = { ...named(compiled.sql), slots };
    statements.set(key, found);
  }
  return found;
}

/** Runs `st` with its arguments given by slot name (see `statement`). */
export function run<R>(reader: Reader, st: Statement, args: Record<string, unknown>): Promise<R[]> {
  const values = st.slots.map((name) => args[name]);
  return execute<R>(reader, st, values);
}

/**
 * Runs a statement as a named prepared statement: each pooled connection parses it once and then runs its cached
 * generic plan (see `createReadPool`), so the hot lookups skip planning, which costs more than executing them.
 */
export async function execute<R>(reader: Reader, st: NamedStatement, values: unknown[]): Promise<R[]> {
  if (!reader.pool) return (await reader.db.executeQuery(CompiledQuery.raw(st.sql, values))).rows as R[];
  // Each connection open now may hold a statement prepared before a migration (below), and fail once with it.
  let staleRetries = reader.pool.totalCount;
  for (;;) {
    try {
      const result = await reader.pool.query({ name: st.name, text: st.sql, values });
      return result.rows as R[];
    } catch (e) {
      const { code, routine } = e as { code?: string; routine?: string };
      if (code === QUERY_CANCELED)
        throw new HttpError(
          503,
          "read_timeout",
          "The read took longer than this service allows; ask for an earlier page or a narrower filter",
        );
      // A migration changed a column this statement returns (its type or collation) after the connection prepared
      // it. The pool closes a connection whose query failed, so the next attempt prepares it anew elsewhere.
      if (code === FEATURE_NOT_SUPPORTED && routine === STALE_PLAN_ROUTINE && staleRetries-- > 0) continue;
      throw e;
    }
  }
}

/** Postgres' SQLSTATE for a statement cancelled, here by the read pool's `statement_timeout`. */
const QUERY_CANCELED = "57014";
/**
 * "cached plan must not change result type": a prepared statement whose result columns changed since it was
 * prepared. Known by SQLSTATE and the server function that raises it, as the message may be translated.
 */
const FEATURE_NOT_SUPPORTED = "0A000";
const STALE_PLAN_ROUTINE = "RevalidateCachedQuery";
