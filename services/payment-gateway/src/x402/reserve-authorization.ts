import type { Logger } from "@humanpass/telemetry";
import type { AfterVerifyHook, BeforeSettleHook, OnVerifyFailureHook } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { authorizationOf, type PaymentReservations } from "../db/payment-reservations.ts";

/** The reason a second copy of a payment already being served is refused with. */
export const DUPLICATE_PAYMENT = "duplicate_payment";

type Refusal = { abort: true; reason: string };

/**
 * Claims each EIP-3009 authorization (token, payer, nonce) in one statement before the handler runs, so
 * concurrent copies of one payment run the handler (and its upstream) once; the others are refused with
 * `duplicate_payment`. A store that cannot be asked refuses too: the handler must not run unclaimed.
 * `afterVerify`: once the facilitator found the payment valid (x402 cancels the copies, quota given back).
 * `beforeSettle`: on routes that settle before the handler, where x402 asks the facilitator nothing before
 * settling (its settle checks the signature). A forged copy claiming a nonce first only makes the genuine one wait
 * for nothing: it is refused, charged nothing, and the payer signs again.
 * A payment claimed already with its human proof's admission (`PostgresProofAdmissions`) is not claimed again;
 * `afterVerify` and `verifyFailure` give that claim back when the facilitator finds the payment invalid or cannot
 * be asked, as if it had never been taken.
 */
export function reserveAuthorization(
  reservations: PaymentReservations,
  logger: Logger,
): { afterVerify: AfterVerifyHook; beforeSettle: BeforeSettleHook; verifyFailure: OnVerifyFailureHook } {
  async function claim(
    paymentPayload: Pick<PaymentPayload, "payload">,
    requirements: Pick<PaymentRequirements, "network" | "asset">,
  ): Promise<Refusal | undefined> {
    if (reservations.claimedWithAdmission(paymentPayload)) return;
    const authorization = authorizationOf(paymentPayload, requirements);
    if (!authorization) return;
    try {
      const fresh = await reservations.reserve(authorization);
      return fresh ? undefined : { abort: true, reason: DUPLICATE_PAYMENT };
    } catch (error) {
      logger.error({ err: (error as Error).message }, "payment reservation failed; payment refused");
      return { abort: true, reason: "payment_unavailable" };
    }
  }

  async function giveBack(
    paymentPayload: Pick<PaymentPayload, "payload">,
    requirements: Pick<PaymentRequirements, "network" | "asset">,
  ): Promise<void> {
    if (!reservations.claimedWithAdmission(paymentPayload)) return;
    const authorization = authorizationOf(paymentPayload, requirements);
    if (!authorization) return;
    try {
      await reservations.release(authorization);
    } catch (error) {
      // The claim lapses at the authorization's validBefore; until then the payer signs a new one.
      logger.warn(
        { err: (error as Error).message },
        "claim of an unverified payment could not be given back",
      );
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
