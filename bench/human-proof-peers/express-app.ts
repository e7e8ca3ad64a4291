// What both Express servers of the peer bench share: the `/bench` route's two tiers (the gateway's routes file's
// prices and terms), x402's mock facilitator as the gateway runs it with MOCK_FACILITATOR=true, and the listening
// app (`/readyz` before the payment middleware, `/bench` answering `{ ok: true }`).
import { once } from "node:events";
import { createMockFacilitatorClient } from "@humanpass/x402-fastify";
import type { PaymentOption } from "@x402/core/http";
import type { RoutesConfig } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import express, { type RequestHandler } from "express";

// Set by index.ts: these processes leave the bench's setup modules (and their dependencies) unloaded.
export const env = {
  port: Number(process.env.PORT),
  network: process.env.NETWORK as Network,
  usdc: process.env.USDC as string,
  nonceKey: process.env.NONCE_KEY as string,
  publicUrl: process.env.PUBLIC_URL as string,
  attestationsApiUrl: process.env.ATTESTATIONS_API_URL as string,
};

const PAY_TO = "0x000000000000000000000000000000000000dEaD";

export const facilitator = createMockFacilitatorClient({
  kinds: [{ network: env.network, scheme: "exact" }],
});

const tier = (amount: string, extra?: Record<string, unknown>): PaymentOption => ({
  scheme: "exact",
  network: env.network,
  payTo: PAY_TO,
  price: { amount, asset: env.usdc, extra: { name: "USD Coin", version: "2" } },
  ...(extra ? { extra } : {}),
});

/** `GET /bench`: $0.01, or $0.001 for an agent whose owner is a verified human (a million uses per human). */
export function benchRoutes(ownershipSchema: string, humanProof: unknown): RoutesConfig {
  return {
    "GET /bench": {
      accepts: [
        tier("10000"),
        tier("1000", { requiredAttestations: [ownershipSchema], maxUse: 1_000_000, scope: "bench" }),
      ],
      description: "bench",
      mimeType: "application/json",
      extensions: { "human-proof": humanProof },
    },
  };
}

export async function listen(payments: RequestHandler): Promise<void> {
  const server = express()
    .get("/readyz", (_req, res) => {
      res.json({ ok: true });
    })
    .use(payments)
    .get("/bench", (_req, res) => {
      res.json({ ok: true });
    })
    .listen(env.port, "127.0.0.1");
  await once(server, "listening");
  process.once("SIGTERM", () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
