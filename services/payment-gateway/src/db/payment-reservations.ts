import type { Kysely } from "@humanpass/db";
import type { Logger } from "@humanpass/telemetry";
import { throttledPurge } from "./expiry-purge.ts";
import type { Database } from "./types.ts";

export type Authorization = { network: string; asset: string; payer: string; nonce: string; expiresAt: Date };

/** Claims an EIP-3009 authorization for one request; false when another request already holds it. */
export interface PaymentReservations {
  reserve(authorization: Authorization): Promise<boolean>;
}

/**
 * Reservations shared by every gateway instance: one insert under the authorization's unique key, so of any
 * number of concurrent copies of one payment exactly one proceeds to the handler. A row is kept until the
 * authorization's `validBefore` (an authorization is used once on chain, settled or not), then purged.
 */
export class PostgresPaymentReservations implements PaymentReservations {
  private readonly purgeExpired: () => void;

  private readonly db: Kysely<Database>;

  constructor(db: Kysely<Database>, logger: Logger, purgeIntervalMs = 60_000) {
    this.db = db;
    this.purgeExpired = throttledPurge(
      (now) => db.deleteFrom("payment_reservations").where("expires_at", "<", now).execute(),
      "expired payment reservations",
      logger,
      purgeIntervalMs,
    );
  }

  async reserve({ network, asset, payer, nonce, expiresAt }: Authorization): Promise<boolean> {
    this.purgeExpired();
    const row = await this.db
      .insertInto("payment_reservations")
      .values({
        network,
        asset: asset.toLowerCase(),
        payer: payer.toLowerCase(),
        nonce: nonce.toLowerCase(),
        expires_at: expiresAt,
      })
      .onConflict((oc) => oc.doNothing())
      .returning("nonce")
      .executeTakeFirst();
    return row !== undefined;
  }
}

/** One process only: for development and the in-memory set-up. */
export class InMemoryPaymentReservations implements PaymentReservations {
  private readonly held = new Map<string, number>();

  async reserve({ network, asset, payer, nonce, expiresAt }: Authorization): Promise<boolean> {
    const now = Date.now();
    for (const [key, until] of this.held) if (until <= now) this.held.delete(key);
    const key = [network, asset, payer, nonce].join(" ").toLowerCase();
    if (this.held.has(key)) return false;
    this.held.set(key, expiresAt.getTime());
    return true;
  }
}
