import { type Kysely, sql } from "@humanpass/db";
import type { HumanUsageStorage } from "@humanpass/human-proof";
import type { Database } from "./types.ts";

/**
 * Per-human usage counters shared by every gateway instance. Each method is one statement, so concurrent
 * requests of one human on any number of instances can never take more than `maxUse`.
 */
export class PostgresHumanUsageStorage implements HumanUsageStorage {
  private readonly db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async incrementIfBelow(humanId: string, maxUse: number, scope: string): Promise<number | null> {
    // The insert arm is guarded too, so a cap below 1 never creates a first use.
    const { rows } = await sql<{ count: number }>`
      insert into human_usage as u (human_id, scope, count)
      select ${humanId}, ${scope}, 1 where ${maxUse}::integer >= 1
      on conflict (human_id, scope) do update set count = u.count + 1, updated_at = now()
        where u.count < ${maxUse}::integer
      returning u.count`.execute(this.db);
    return rows[0]?.count ?? null;
  }

  async decrementIfAboveZero(humanId: string, scope: string): Promise<number | null> {
    const row = await this.db
      .updateTable("human_usage")
      .set({ count: sql`count - 1`, updated_at: sql`now()` })
      .where("human_id", "=", humanId)
      .where("scope", "=", scope)
      .where("count", ">", 0)
      .returning("count")
      .executeTakeFirst();
    return row?.count ?? null;
  }

  /** Current count, for operators and tests; 0 when the human never used the scope. */
  async count(humanId: string, scope: string): Promise<number> {
    const row = await this.db
      .selectFrom("human_usage")
      .select("count")
      .where("human_id", "=", humanId)
      .where("scope", "=", scope)
      .executeTakeFirst();
    return row?.count ?? 0;
  }
}
