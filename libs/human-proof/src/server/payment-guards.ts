import type {
  AfterVerifyHook,
  BeforeSettleHook,
  BeforeVerifyHook,
  OnVerifyFailureHook,
  x402ResourceServer,
} from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { admittedProofNonceOf } from "./payment-proof.ts";
import {
  authorizationOf,
  InMemoryPaymentReservations,
  type PaymentReservations,
} from "./payment-reservations.ts";

/** The reason a payment whose EIP-3009 authorization cannot pay the chosen tier is refused with. */
export const MALFORMED_PAYMENT = "invalid_payment_payload";

/** The reason a payment of a kind its tier does not offer (Permit2) is refused with: x402's own code for it. */
export const UNOFFERED_PAYMENT = "unsupported_payload_type";

/** The reason a second copy of a payment already being served is refused with. */
export const DUPLICATE_PAYMENT = "duplicate_payment";

/** The reason a payment is refused with when its claim could not be stored: the handler must not run unclaimed. */
export const RESERVATION_UNAVAILABLE = "payment_unavailable";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^[0-9]{1,78}$/;
const NONCE = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;

/** An EIP-3009 `transferWithAuthorization` as x402's `exact` payload carries it. */
export type Authorization = {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
};

function isAuthorization(a: Record<string, unknown> | undefined): a is Authorization {
  return (
    a !== undefined &&
    typeof a.from === "string" &&
    ADDRESS.test(a.from) &&
    typeof a.to === "string" &&
    ADDRESS.test(a.to) &&
    [a.value, a.validAfter, a.validBefore].every((v) => typeof v === "string" && UINT.test(v)) &&
    typeof a.nonce === "string" &&
    NONCE.test(a.nonce)
  );
}

/**
 * Refuses, before anything costly (the human lookup, the facilitator), an `exact` EVM payment that cannot pay
 * the chosen tier: a Permit2 payload where the tier does not offer Permit2 (`extra.assetTransferMethod`; x402's
 * facilitator would take the payload's own word for its kind), or an EIP-3009 authorization that is malformed,
 * pays the wrong recipient or amount, or is past `validBefore`.
 */
export const refuseMalformedPayment: BeforeVerifyHook = async ({ paymentPayload, requirements }) => {
  if (requirements.scheme !== "exact" || !requirements.network.startsWith("eip155:")) return;
  const payload = paymentPayload.payload as
    | { authorization?: Record<string, unknown>; signature?: unknown }
    | undefined;
  const offersPermit2 =
    (requirements.extra as { assetTransferMethod?: unknown } | undefined)?.assetTransferMethod === "permit2";
  // x402's own test for the kind (`isPermit2Payload` of @x402/evm), which is not this package's dependency.
  if (typeof payload === "object" && payload !== null && "permit2Authorization" in payload)
    return offersPermit2 ? undefined : { abort: true, reason: UNOFFERED_PAYMENT };
  const a = payload?.authorization;
  const signature = payload?.signature;
  if (!isAuthorization(a) || typeof signature !== "string" || !SIGNATURE.test(signature))
    return { abort: true, reason: MALFORMED_PAYMENT };
  const paysTier =
    a.to.toLowerCase() === requirements.payTo.toLowerCase() &&
    a.value === requirements.amount &&
    BigInt(a.validBefore) > BigInt(Math.floor(Date.now() / 1000));
  return paysTier ? undefined : { abort: true, reason: MALFORMED_PAYMENT };
};

type Refusal = { abort: true; reason: string };
type Payment = Pick<PaymentPayload, "payload" | "extensions">;
type Tier = Pick<PaymentRequirements, "network" | "asset" | "extra">;

export type PaymentReservationHooks = {
  afterVerify: AfterVerifyHook;
  beforeSettle: BeforeSettleHook;
  verifyFailure: OnVerifyFailureHook;
};

/**
 * Claims each EIP-3009 authorization before the handler runs, so concurrent copies of one payment run the
 * handler (and its upstream) once; the others are refused with `duplicate_payment`. A store that cannot be asked
 * refuses too (`payment_unavailable`). `afterVerify`: once the facilitator found the payment valid (x402 cancels
 * the copies, quota given back). `beforeSettle`: on routes that settle before the handler, where x402 asks the
 * facilitator nothing before settling (its settle checks the signature): a forged copy claiming a nonce first
 * only makes the genuine one wait for nothing, refused and charged nothing, and the payer signs again.
 * A payment of a human tier claims under its proof's nonce (`admittedProofNonceOf`): a store that claimed the
 * payment with the proof's admission grants it again, and `afterVerify` and `verifyFailure` give that claim back
 * when the facilitator finds the payment invalid or cannot be asked.
 */
export function paymentReservationHooks(
  reservations: PaymentReservations,
  onError: (error: unknown, during: "reserve" | "release") => void = () => {},
): PaymentReservationHooks {
  async function claim(paymentPayload: Payment, requirements: Tier): Promise<Refusal | undefined> {
    const authorization = authorizationOf(paymentPayload, requirements);
    if (!authorization) return;
    try {
      const fresh = await reservations.reserve(
        authorization,
        admittedProofNonceOf(paymentPayload, requirements),
      );
      return fresh ? undefined : { abort: true, reason: DUPLICATE_PAYMENT };
    } catch (error) {
      onError(error, "reserve");
      return { abort: true, reason: RESERVATION_UNAVAILABLE };
    }
  }

  async function giveBack(paymentPayload: Payment, requirements: Tier): Promise<void> {
    const claimant = admittedProofNonceOf(paymentPayload, requirements);
    const authorization = authorizationOf(paymentPayload, requirements);
    if (!authorization || !claimant) return;
    try {
      await reservations.release(authorization, claimant);
    } catch (error) {
      // The claim lapses at the authorization's validBefore; until then the payer signs a new one.
      onError(error, "release");
    }
  }

  return {
    async afterVerify({ result, paymentPayload, requirements }) {
      if (result.isValid) return claim(paymentPayload, requirements);
      await giveBack(paymentPayload, requirements);
    },
    async beforeSettle({ phase, paymentPayload, requirements }) {
      if (phase === "before-handler") return claim(paymentPayload, requirements);
    },
    async verifyFailure({ paymentPayload, requirements }) {
      await giveBack(paymentPayload, requirements);
    },
  };
}

export type PaymentGuardOptions = {
  /** Where each payment's claim is kept; default in this process (one instance only). */
  reservations?: PaymentReservations;
  /** Told when the store could not be asked (the payment was refused) or a claim could not be given back. */
  onReservationError?: (error: unknown, during: "reserve" | "release") => void;
};

/**
 * The payment guards of an x402 resource server, whatever framework serves it: a payment that cannot pay its
 * tier (Permit2 where the tier offers EIP-3009 only, a malformed or expired authorization) is refused before
 * anything costly, and each payment's authorization is claimed before the handler runs (one handler run per
 * payment, however many copies arrive). `configureHumanProofServer` registers them unless told not to.
 */
export function guardPayments(server: x402ResourceServer, options: PaymentGuardOptions = {}): void {
  server.onBeforeVerify(refuseMalformedPayment);
  const hooks = paymentReservationHooks(
    options.reservations ?? new InMemoryPaymentReservations(),
    options.onReservationError,
  );
  server.onAfterVerify(hooks.afterVerify);
  server.onBeforeSettle(hooks.beforeSettle);
  server.onVerifyFailure(hooks.verifyFailure);
}
