import type { Kysely } from "@humanpass/db";
import type { NonceStore } from "@humanpass/human-proof";
import type { Database } from "./types";

/** Used human-proof nonces, shared by every instance: a captured proof is accepted once, wherever it is replayed. */
export class PostgresNonceStore implements NonceStore {
  private lastPurge = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly purgeIntervalMs = 60_000,
  ) {}

  async consume(nonce: string, expiresAt: Date): Promise<boolean> {
    await this.purgeExpired();
    const row = await this.db
      .insertInto("used_proof_nonces")
      .values({ nonce, expires_at: expiresAt })
      .onConflict((oc) => oc.column("nonce").doNothing())
      .returning("nonce")
      .executeTakeFirst();
    return row !== undefined;
  }

  // A proof past its expiry is refused for age before its nonce is looked at, so its row can go.
  private async purgeExpired(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPurge < this.purgeIntervalMs) return;
    this.lastPurge = now;
    await this.db.deleteFrom("used_proof_nonces").where("expires_at", "<", new Date(now)).execute();
  }
}
