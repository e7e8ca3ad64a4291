import type { Logger } from "@humanpass/telemetry";
import type { AfterVerifyHook } from "@x402/core/server";
import type { PaymentReservations } from "../db/payment-reservations";

/** The reason a second copy of a payment already being served is refused with. */
export const DUPLICATE_PAYMENT = "duplicate_payment";

type Eip3009Payload = { authorization?: { from?: string; nonce?: string; validBefore?: string } };

/**
 * After the facilitator found the payment valid and before the handler runs: claims its EIP-3009 authorization
 * (token, payer, nonce) in one statement, so concurrent copies of one payment run the handler (and its upstream)
 * once; the others are refused with `duplicate_payment` and x402 cancels them (quota given back). A store that
 * cannot be asked refuses too: the handler must not run unclaimed.
 */
export function reserveAuthorization(reservations: PaymentReservations, logger: Logger): AfterVerifyHook {
  return async ({ result, paymentPayload, requirements }) => {
    if (!result.isValid) return;
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
  };
}
