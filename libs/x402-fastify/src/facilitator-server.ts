import type { FacilitatorClient } from "@x402/core/server";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import { facilitatorRoutes } from "./facilitator-routes.ts";

export interface FacilitatorServerOptions {
  facilitator: FacilitatorClient;
  /** Required on `/verify` and `/settle` when set (see `facilitatorRoutes`). */
  apiKey?: string;
  /** The whole request, body included, must arrive within this; default 30 s, as the services'. */
  requestTimeoutMs?: number;
  /** An idle connection is closed after this; default 65 s, as the services'. */
  connectionTimeoutMs?: number;
  logger?: FastifyServerOptions["logger"];
}

/** A /verify or /settle body is a payment payload and its requirements: a few kilobytes. */
const BODY_LIMIT = 64 * 1024;

/**
 * The facilitator HTTP API as a server of its own (what `humanpass-evm-facilitator` listens with): `facilitatorRoutes`,
 * `GET /readyz`, a 64 KiB body limit and the services' request and connection timeouts. Node stops timing a request
 * once the app has it, so a body that trickles in (or never ends) is failed with 408 after `requestTimeoutMs` here.
 */
export async function buildFacilitatorServer(options: FacilitatorServerOptions): Promise<FastifyInstance> {
  const requestMs = options.requestTimeoutMs ?? 30_000;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: BODY_LIMIT,
    requestTimeout: requestMs,
    connectionTimeout: options.connectionTimeoutMs ?? 65_000,
    // Node checks requestTimeout only this often (30 s by default): a slow sender would be held up to twice as long.
    http: { connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(requestMs / 4))) },
  });
  app.addHook("onRequest", (request, reply, done) => {
    const raw = request.raw;
    if (raw.complete) return done();
    const timer = setTimeout(() => {
      if (raw.complete) return;
      request.log.warn({ url: request.url, timeoutMs: requestMs }, "request body not received in time");
      reply.header("connection", "close");
      // Fails the body reader, so Fastify answers 408 in its usual error shape.
      raw.emit(
        "error",
        Object.assign(new Error("The request body did not arrive in time"), { statusCode: 408 }),
      );
    }, requestMs);
    raw.once("end", () => clearTimeout(timer));
    raw.once("close", () => clearTimeout(timer));
    done();
  });
  app.get("/readyz", async () => ({ status: "ready" }));
  await app.register(facilitatorRoutes, { facilitator: options.facilitator, apiKey: options.apiKey });
  return app;
}
