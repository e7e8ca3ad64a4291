import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";

/** An EIP-3009 authorization under the key the chain spends it by (token, payer, nonce), and when it lapses. */
export type PaymentAuthorization = {
  network: string;
  asset: string;
  payer: string;
  nonce: string;
  expiresAt: Date;
};

/**
 * Claims each payment's authorization for one request, so that concurrent copies of one payment run the handler
 * once. `claimant` is the nonce of the proof a payment of a human tier carries, which only that payment's request
 * could admit: a store that claimed the authorization with that admission grants it again to the claimant, and
 * only the claimant can give it back. Both must be single atomic operations on a store every instance shares.
 */
export interface PaymentReservations {
  /** True when the authorization is now this request's; false when another request holds it. */
  reserve(authorization: PaymentAuthorization, claimant?: string): Promise<boolean>;
  /** Gives up a claim `claimant` holds: a payment claimed before its verification, which then failed. */
  release(authorization: PaymentAuthorization, claimant: string): Promise<void>;
}

type Eip3009Payload = { authorization?: { from?: string; nonce?: string; validBefore?: string } };

/**
 * The key a payment is claimed under (the payer and nonce as the chain reads them, any case), or undefined for a
 * payload that is not an EIP-3009 authorization.
 */
export function authorizationOf(
  paymentPayload: Pick<PaymentPayload, "payload">,
  requirements: Pick<PaymentRequirements, "network" | "asset">,
): PaymentAuthorization | undefined {
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

export function authorizationKey({ network, asset, payer, nonce }: PaymentAuthorization): string {
  return [network, asset, payer, nonce].join(" ");
}

/**
 * One process only (development, or a single instance): the claims live in this process and are lost on
 * restart. Several instances share `PostgresHumanProofStore` of `@humanpass/human-proof/postgres`.
 */
export class InMemoryPaymentReservations implements PaymentReservations {
  private readonly held = new Map<string, { until: number; claimant: string | undefined }>();

  async reserve(authorization: PaymentAuthorization, claimant?: string): Promise<boolean> {
    const now = Date.now();
    for (const [key, { until }] of this.held) if (until <= now) this.held.delete(key);
    const key = authorizationKey(authorization);
    const holder = this.held.get(key);
    if (holder) return claimant !== undefined && holder.claimant === claimant;
    this.held.set(key, { until: authorization.expiresAt.getTime(), claimant });
    return true;
  }

  async release(authorization: PaymentAuthorization, claimant: string): Promise<void> {
    const key = authorizationKey(authorization);
    if (this.held.get(key)?.claimant === claimant) this.held.delete(key);
  }
}
