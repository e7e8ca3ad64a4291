import { Type } from "@sinclair/typebox";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import type { FastifyInstance } from "fastify";

// The body @x402/core's HTTPFacilitatorClient posts to /verify and /settle; the facilitator checks the rest.
const PAYMENT_BODY = Type.Object({
  x402Version: Type.Optional(Type.Integer()),
  paymentPayload: Type.Object({ x402Version: Type.Integer(), payload: Type.Object({}) }),
  paymentRequirements: Type.Object({ scheme: Type.String(), network: Type.String() }),
});

type PaymentBody = { paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements };

/** A facilitator's refusal to look at a payment, without its stack or internals: the caller's mistake, a 400. */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0]!.slice(0, 200);
}

/**
 * Serves `facilitator` over the x402 facilitator HTTP API as `@x402/core`'s `HTTPFacilitatorClient` calls it:
 * `POST /verify` and `POST /settle` (`{ x402Version, paymentPayload, paymentRequirements }`, answered with a
 * VerifyResponse / SettleResponse; 400 with `isValid: false` / `success: false` when the facilitator refuses to
 * handle the payment) and `GET /supported`. Register it under a prefix to serve it beside other routes.
 */
export async function facilitatorRoutes(app: FastifyInstance, options: { facilitator: FacilitatorClient }) {
  const { facilitator } = options;
  app.get("/supported", async () => facilitator.getSupported());
  app.post<{ Body: PaymentBody }>("/verify", { schema: { body: PAYMENT_BODY } }, async (request, reply) => {
    const { paymentPayload, paymentRequirements } = request.body;
    try {
      return await facilitator.verify(paymentPayload, paymentRequirements);
    } catch (error) {
      return reply
        .code(400)
        .send({ isValid: false, invalidReason: "invalid_payment", invalidMessage: reasonOf(error) });
    }
  });
  app.post<{ Body: PaymentBody }>("/settle", { schema: { body: PAYMENT_BODY } }, async (request, reply) => {
    const { paymentPayload, paymentRequirements } = request.body;
    try {
      return await facilitator.settle(paymentPayload, paymentRequirements);
    } catch (error) {
      return reply.code(400).send({
        success: false,
        errorReason: "settlement_failed",
        errorMessage: reasonOf(error),
        transaction: "",
        network: paymentRequirements.network,
      });
    }
  });
}
