import { createHash, timingSafeEqual } from "node:crypto";
import { Type } from "@sinclair/typebox";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

// The body @x402/core's HTTPFacilitatorClient posts to /verify and /settle; the facilitator checks the rest.
const PAYMENT_BODY = Type.Object({
  x402Version: Type.Optional(Type.Integer()),
  paymentPayload: Type.Object({ x402Version: Type.Integer(), payload: Type.Object({}) }),
  paymentRequirements: Type.Object({ scheme: Type.String(), network: Type.String() }),
});

type PaymentBody = { paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements };

export interface FacilitatorRoutesOptions {
  facilitator: FacilitatorClient;
  /**
   * Required as `Authorization: Bearer <apiKey>` on `/verify` and `/settle` when set (what `HTTPFacilitatorClient`'s
   * `createAuthHeaders` sends); without it anyone who reaches the routes has payments settled at the settler's gas.
   */
  apiKey?: string;
}

// Hex runs as long as a signature's r or s (32 bytes) or longer: signatures, their parts, nonces.
const LONG_HEX = /(0x)?[0-9a-fA-F]{64,}/g;

/**
 * A facilitator's message as the caller may see it: the summary a client library puts before its details (viem
 * lists the call's arguments, v, r and s of the payer's signature among them, after a blank line), on one line,
 * long hex runs cut out, at most 200 characters.
 */
function publicMessage(message: string): string {
  const summary = message.split(/\r?\n\s*\r?\n/)[0] ?? "";
  return summary
    .replace(/\s*\r?\n\s*/g, " ")
    .replace(LONG_HEX, "0x…")
    .slice(0, 200);
}

function reasonOf(error: unknown): string {
  return publicMessage(error instanceof Error ? error.message : String(error));
}

function withPublicMessages<T extends { invalidMessage?: string; errorMessage?: string }>(answer: T): T {
  const copy = { ...answer };
  if (typeof copy.invalidMessage === "string") copy.invalidMessage = publicMessage(copy.invalidMessage);
  if (typeof copy.errorMessage === "string") copy.errorMessage = publicMessage(copy.errorMessage);
  return copy;
}

const digest = (text: string) => createHash("sha256").update(text).digest();

function requireApiKey(apiKey: string) {
  const expected = digest(`Bearer ${apiKey}`);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const given = request.headers.authorization;
    // Compared as digests so that neither the length nor the content leaks through timing.
    if (given && timingSafeEqual(digest(given), expected)) return;
    return reply.code(401).send({
      statusCode: 401,
      code: "unauthorized",
      error: "Unauthorized",
      message: "This facilitator needs Authorization: Bearer <its API key> on /verify and /settle",
    });
  };
}

/**
 * Serves `facilitator` over the x402 facilitator HTTP API as `@x402/core`'s `HTTPFacilitatorClient` calls it:
 * `POST /verify` and `POST /settle` (`{ x402Version, paymentPayload, paymentRequirements }`, answered with a
 * VerifyResponse / SettleResponse; 400 with `isValid: false` / `success: false` when the facilitator refuses to
 * handle the payment) and `GET /supported`. Messages carry no signature bytes. With `apiKey`, `/verify` and
 * `/settle` answer 401 `unauthorized` without it. Register it under a prefix to serve it beside other routes.
 */
export async function facilitatorRoutes(app: FastifyInstance, options: FacilitatorRoutesOptions) {
  const { facilitator } = options;
  const onRequest = options.apiKey ? requireApiKey(options.apiKey) : undefined;
  const route = { schema: { body: PAYMENT_BODY }, ...(onRequest && { onRequest }) };
  app.get("/supported", async () => facilitator.getSupported());
  app.post<{ Body: PaymentBody }>("/verify", route, async (request, reply) => {
    const { paymentPayload, paymentRequirements } = request.body;
    try {
      return withPublicMessages(await facilitator.verify(paymentPayload, paymentRequirements));
    } catch (error) {
      return reply
        .code(400)
        .send({ isValid: false, invalidReason: "invalid_payment", invalidMessage: reasonOf(error) });
    }
  });
  app.post<{ Body: PaymentBody }>("/settle", route, async (request, reply) => {
    const { paymentPayload, paymentRequirements } = request.body;
    try {
      return withPublicMessages(await facilitator.settle(paymentPayload, paymentRequirements));
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
