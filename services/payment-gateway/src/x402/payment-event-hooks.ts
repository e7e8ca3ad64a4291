import { fastifyRequestOf, payerOf, withoutSecrets } from "@humanpass/x402-fastify";
import type { HTTPTransportContext, x402ResourceServer } from "@x402/core/server";
import type { PaymentPayload } from "@x402/core/types";
import type { FastifyRequest } from "fastify";
import type { PaymentEvents } from "../events/payment-events.ts";

type DeepPayload = { readonly resource?: { readonly url?: string }; readonly payload: unknown };

/** The paid resource under the gateway's public URL (the payload's own `resource` is the caller's claim). */
function resourceOf(paymentPayload: DeepPayload, transportContext: unknown): string {
  const adapter = (transportContext as HTTPTransportContext | undefined)?.request?.adapter;
  return adapter?.getUrl?.() ?? paymentPayload.resource?.url ?? "";
}

function optionalHumanId(humanId: string | undefined) {
  return humanId ? { humanId } : {};
}

/** `payment_settled` and `payment_failed` (verify, settle and handler stages) from the resource server's hooks. */
export function registerPaymentEventHooks(
  server: x402ResourceServer,
  events: PaymentEvents,
  humanIdOf: (request: FastifyRequest | undefined) => string | undefined,
): void {
  const humanOf = (transportContext: unknown) =>
    optionalHumanId(humanIdOf(fastifyRequestOf(transportContext)));
  const payer = (payload: DeepPayload, reported?: string) => reported ?? payerOf(payload as PaymentPayload);

  server.onAfterSettle(async ({ paymentPayload, requirements, result, transportContext }) => {
    await events.emit("payment_settled", {
      resource: resourceOf(paymentPayload, transportContext),
      network: result.network,
      payer: payer(paymentPayload, result.payer) ?? "",
      payTo: requirements.payTo,
      amount: result.amount || requirements.amount,
      asset: requirements.asset,
      transaction: result.transaction,
      ...humanOf(transportContext),
    });
  });

  server.onAfterVerify(async ({ paymentPayload, requirements, result, transportContext }) => {
    if (result.isValid) return;
    await events.emit("payment_failed", {
      resource: resourceOf(paymentPayload, transportContext),
      network: requirements.network,
      stage: "verify",
      reason: result.invalidReason ?? "invalid_payment",
      ...withPayer(payer(paymentPayload, result.payer)),
      ...humanOf(transportContext),
    });
  });

  server.onVerifyFailure(async ({ paymentPayload, requirements, error, transportContext }) => {
    await events.emit("payment_failed", {
      resource: resourceOf(paymentPayload, transportContext),
      network: requirements.network,
      stage: "verify",
      reason: error.message || "verify_error",
      ...withPayer(payer(paymentPayload)),
      ...humanOf(transportContext),
    });
  });

  server.onSettleFailure(async ({ paymentPayload, requirements, error, transportContext }) => {
    await events.emit("payment_failed", {
      resource: resourceOf(paymentPayload, transportContext),
      network: requirements.network,
      stage: "settle",
      // The facilitator's message may quote the authorization and its signature.
      reason:
        (error as { errorReason?: string }).errorReason || withoutSecrets(error.message) || "settle_failed",
      ...withPayer(payer(paymentPayload)),
      ...humanOf(transportContext),
    });
  });

  server.onVerifiedPaymentCanceled(
    async ({ paymentPayload, requirements, reason, responseStatus, transportContext }) => {
      await events.emit("payment_failed", {
        resource: resourceOf(paymentPayload, transportContext),
        network: requirements.network,
        stage: "handler",
        reason: responseStatus ? `${reason}:${responseStatus}` : reason,
        ...withPayer(payer(paymentPayload)),
        ...humanOf(transportContext),
      });
    },
  );
}

function withPayer(payer: string | undefined) {
  return payer ? { payer } : {};
}
