import type { Kysely } from "@humanpass/db";
import type { Logger } from "@humanpass/telemetry";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { throttledPurge } from "./expiry-purge.ts";
import type { Database } from "./types.ts";

export type Authorization = { network: string; asset: string; payer: string; nonce: string; expiresAt: Date };

/** Claims an EIP-3009 authorization for one request; false when another request already holds it. */
export interface PaymentReservations {
  reserve(authorization: Authorization): Promise<boolean>;
  /** Gives a claim up: for a payment claimed before its verification, which then failed. */
  release(authorization: Authorization): Promise<void>;
  /** Whether this request's payment (x402's payload object) was claimed with its human proof's admission. */
  claimedWithAdmission(paymentPayload: object): boolean;
}

type Eip3009Payload = { authorization?: { from?: string; nonce?: string; validBefore?: string } };

/**
 * The key a payment is claimed under (token, payer, authorization nonce; the payer and nonce as the chain reads
 * them, any case), or undefined for a payload that is not an EIP-3009 authorization.
 */
export function authorizationOf(
  paymentPayload: Pick<PaymentPayload, "payload">,
  requirements: Pick<PaymentRequirements, "network" | "asset">,
): Authorization | undefined {
  const { authorization } = (paymentPayload.payload ?? {}) as Eip3009Payload;
  if (!authorization?.from || !authorization.nonce || !authorization.validBefore) return undefined;
  return {
    network: requirements.network,
    asset: requirements.asset.toLowerCase(),
    payer: authorization.from.toLowerCase(),
    nonce: authorization.nonce.toLowerCase(),
    expiresAt: new Date(Number(authorization.validBefore) * 1000),
  };
}

/**
 * Reservations shared by every gateway instance: one insert under the authorization's unique key, so of any
 * number of concurrent copies of one payment exactly one proceeds to the handler. A row is kept until the
 * authorization's `validBefore` (an authorization is used once on chain, settled or not), then purged.
 */
export class PostgresPaymentReservations implements PaymentReservations {
  /** Deletes the rows past their `validBefore`, at most once a purge interval; `PostgresProofAdmissions` claims too. */
  readonly purgeExpired: () => void;
  // x402 hands the same payload object to every hook of one request.
  private readonly claimedEarly = new WeakSet<object>();

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
      .values({ network, asset, payer, nonce, expires_at: expiresAt })
      .onConflict((oc) => oc.doNothing())
      .returning("nonce")
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Notes a claim that `PostgresProofAdmissions` inserted with the proof's admission. */
  markClaimedWithAdmission(paymentPayload: object): void {
    this.claimedEarly.add(paymentPayload);
  }

  claimedWithAdmission(paymentPayload: object): boolean {
    return this.claimedEarly.has(paymentPayload);
  }

  async release({ network, asset, payer, nonce }: Authorization): Promise<void> {
    await this.db
      .deleteFrom("payment_reservations")
      .where("network", "=", network)
      .where("asset", "=", asset)
      .where("payer", "=", payer)
      .where("nonce", "=", nonce)
      .execute();
  }
}

/** One process only: for development and the in-memory set-up, whose admissions claim nothing. */
export class InMemoryPaymentReservations implements PaymentReservations {
  private readonly held = new Map<string, number>();

  async reserve({ network, asset, payer, nonce, expiresAt }: Authorization): Promise<boolean> {
    const now = Date.now();
    for (const [key, until] of this.held) if (until <= now) this.held.delete(key);
    const key = [network, asset, payer, nonce].join(" ");
    if (this.held.has(key)) return false;
    this.held.set(key, expiresAt.getTime());
    return true;
  }

  async release({ network, asset, payer, nonce }: Authorization): Promise<void> {
    this.held.delete([network, asset, payer, nonce].join(" "));
  }

  claimedWithAdmission(): boolean {
    return false;
  }
}
