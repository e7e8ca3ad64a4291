import { HttpError } from "@humanpass/http";
import type { Queryable } from "./types.ts";

/** A read statement and the name each pooled connection prepares it under (a name stands for one text only). */
export interface Statement {
  name: string;
  text: string;
}

/**
 * Runs `statement` as a named prepared statement (pg's `name`): each connection parses it once and then runs its
 * cached generic plan (see `readSessionSettings`), so a lookup skips planning, which costs Postgres more than the
 * lookup itself. A statement cancelled by the session's `statement_timeout` is the caller's answer `503`.
 */
export async function read<R>(pool: Queryable, statement: Statement, values: unknown[]): Promise<R[]> {
  try {
    const result = await pool.query({ name: statement.name, text: statement.text, values });
    return result.rows as R[];
  } catch (e) {
    if ((e as { code?: string }).code === QUERY_CANCELED)
      throw new HttpError(
        503,
        "read_timeout",
        "The read took longer than this service allows; ask for an earlier page or a narrower filter",
      );
    throw e;
  }
}

/** Postgres' SQLSTATE for a statement cancelled, here by the session's `statement_timeout`. */
const QUERY_CANCELED = "57014";
