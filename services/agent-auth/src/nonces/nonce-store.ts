import { randomBytes } from "node:crypto";
import type { Kysely } from "@humanpass/db";
import type { Clock } from "@humanpass/service";
import type { AgentAuthDb, ClaimPath } from "../db/schema.ts";

/** Spec 3: a nonce is good for 5 minutes after it was issued. */
export const NONCE_LIFETIME_MS = 300_000;

/** What `issue` draws: 16 random bytes, hex. Anything else is refused before the store is asked. */
export const NONCE_FORMAT = /^[0-9a-f]{32}$/;

export function isNonceFormat(value: unknown): value is string {
  return typeof value === "string" && NONCE_FORMAT.test(value);
}

export interface IssuedNonce {
  nonce: string;
  issuedAt: Date;
  expiresAt: Date;
  message: string;
}

export type ConsumedNonce = { path: ClaimPath; message: string; issuedAt: Date };

export interface NonceStore {
  /** Issues a fresh nonce for `path`; `buildMessage` makes the stored message from the nonce and its times. */
  issue(
    path: ClaimPath,
    buildMessage: (nonce: string, issuedAt: Date, expiresAt: Date) => string,
  ): Promise<IssuedNonce>;
  /**
   * Removes the nonce and returns what it was issued with, or null when it is unknown, already used, older
   * than its lifetime or issued by the other path. It is gone afterwards whatever the outcome.
   */
  consume(nonce: string, path: ClaimPath): Promise<ConsumedNonce | null>;
  /** Deletes up to `limit` nonces past their lifetime in one statement; returns how many. */
  purgeExpired(limit?: number): Promise<number>;
}

export function createNonceStore(db: Kysely<AgentAuthDb>, clock: Clock): NonceStore {
  return {
    async issue(path, buildMessage) {
      const nonce = randomBytes(16).toString("hex");
      const issuedAt = new Date(clock());
      const expiresAt = new Date(issuedAt.getTime() + NONCE_LIFETIME_MS);
      const message = buildMessage(nonce, issuedAt, expiresAt);
      await db.insertInto("nonces").values({ nonce, path, message, issued_at: issuedAt }).execute();
      return { nonce, issuedAt, expiresAt, message };
    },

    async consume(nonce, path) {
      if (!isNonceFormat(nonce)) return null;
      // One statement: of any number of concurrent claims with this nonce, exactly one gets the row.
      const row = await db
        .deleteFrom("nonces")
        .where("nonce", "=", nonce)
        .returning(["path", "message", "issued_at"])
        .executeTakeFirst();
      if (!row) return null;
      if (row.path !== path) return null;
      if (clock() - row.issued_at.getTime() > NONCE_LIFETIME_MS) return null;
      return { path: row.path, message: row.message, issuedAt: row.issued_at };
    },

    async purgeExpired(limit = 5_000) {
      // SKIP LOCKED: replicas purging at once, and a claim consuming one of the rows, never wait on each other.
      const result = await db
        .deleteFrom("nonces")
        .where("nonce", "in", (eb) =>
          eb
            .selectFrom("nonces")
            .select("nonce")
            .where("issued_at", "<", new Date(clock() - NONCE_LIFETIME_MS))
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
