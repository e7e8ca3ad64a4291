import type { UsedNonceStore } from "../server/types.ts";
import type { Queryable } from "./schema.ts";

/** One statement: of any number of concurrent redemptions of a nonce, on any instance, exactly one inserts it. */
export const CONSUME_NONCE_SQL = `insert into used_proof_nonces (nonce, expires_at) values ($1, $2)
  on conflict (nonce) do nothing
  returning nonce`;

/**
 * Deletes at most `$2` rows of `table` whose `expires_at` is before `$1`. SKIP LOCKED: instances purging at once,
 * and an admission touching one of the rows, never wait on each other.
 */
export function purgeExpiredSql(table: string): string {
  return `delete from ${table} where ctid = any(array(select ctid from ${table} where expires_at < $1 limit $2 for update skip locked))`;
}

/**
 * Redeemed challenge nonces in Postgres (table: `USED_NONCES_SQL`), shared by every instance: a row per redeemed
 * nonce, written by one `insert … on conflict do nothing`, and deleted by `purgeExpired` once its proof is too old
 * to be accepted anyway.
 */
export class PostgresUsedNonceStore implements UsedNonceStore {
  private readonly pool: Queryable;

  constructor(pool: Queryable) {
    this.pool = pool;
  }

  async consume(nonce: string, expiresAt: Date): Promise<boolean> {
    const { rows } = await this.pool.query(CONSUME_NONCE_SQL, [nonce, expiresAt]);
    return rows.length > 0;
  }

  /** Deletes at most `limit` rows past their expiry and returns how many; a row left behind is refused anyway. */
  async purgeExpired(now: Date = new Date(), limit = 5_000): Promise<number> {
    const { rowCount } = await this.pool.query(purgeExpiredSql("used_proof_nonces"), [now, limit]);
    return rowCount ?? 0;
  }
}
