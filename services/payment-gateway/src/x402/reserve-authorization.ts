import type { Logger } from "@humanpass/telemetry";
import type { AfterVerifyHook, BeforeSettleHook } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import type { PaymentReservations } from "../db/payment-reservations.ts";

/** The reason a second copy of a payment already being served is refused with. */
export const DUPLICATE_PAYMENT = "duplicate_payment";

type Eip3009Payload = { authorization?: { from?: string; nonce?: string; validBefore?: string } };
type Refusal = { abort: true; reason: string };

/**
 * Claims each EIP-3009 authorization (token, payer, nonce) in one statement before the handler runs, so
 * concurrent copies of one payment run the handler (and its upstream) once; the others are refused with
 * `duplicate_payment`. A store that cannot be asked refuses too: the handler must not run unclaimed.
 * `afterVerify`: once the facilitator found the payment valid (x402 cancels the copies, quota given back).
 * `beforeSettle`: on routes that settle before the handler, where x402 asks the facilitator nothing before
 * settling (its settle checks the signature). A forged copy claiming a nonce first only makes the genuine one wait
 * for nothing: it is refused, charged nothing, and the payer signs again.
 */
export function reserveAuthorization(
  reservations: PaymentReservations,
  logger: Logger,
): { afterVerify: AfterVerifyHook; beforeSettle: BeforeSettleHook } {
  async function claim(
    paymentPayload: Pick<PaymentPayload, "payload">,
    requirements: Pick<PaymentRequirements, "network" | "asset">,
  ): Promise<Refusal | undefined> {
    const { authorization } = (paymentPayload.payload ?? {}) as Eip3009Payload;
    if (!authorization?.from || !authorization.nonce || !authorization.validBefore) return;
    try {
      const fresh = await reservations.reserve({
        network: requirements.network,
        asset: requirements.asset,
        payer: authorization.from,
        nonce: authorization.nonce,
        expiresAt: new Date(Number(authorization.validBefore) * 1000),
      });
      return fresh ? undefined : { abort: true, reason: DUPLICATE_PAYMENT };
    } catch (error) {
      logger.error({ err: (error as Error).message }, "payment reservation failed; payment refused");
      return { abort: true, reason: "payment_unavailable" };
    }
  }

  return {
    async afterVerify({ result, paymentPayload, requirements }) {
      if (result.isValid) return claim(paymentPayload, requirements);
    },
    async beforeSettle({ phase, paymentPayload, requirements }) {
      if (phase === "before-handler") return claim(paymentPayload, requirements);
    },
  };
}
