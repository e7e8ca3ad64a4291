/**
 * The servers of docs/sdk.md, built as its snippets build them (one resource server configured by
 * `configureHumanProofServer`, `PublicHTTPResourceServer` under each framework's own x402 middleware or
 * `installPaymentGate`), with a scripted facilitator and an in-process registry instead of the devnet's, and
 * handlers that count their runs.
 */
import { once } from "node:events";
import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";
import { serve } from "@hono/node-server";
import { freePort } from "@humanpass/testing";
import { installPaymentGate } from "@humanpass/x402-fastify";
import type { PaymentOption } from "@x402/core/http";
import type { RoutesConfig, x402ResourceServer } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentMiddlewareFromHTTPServer as expressPayments } from "@x402/express";
import { paymentMiddlewareFromHTTPServer as honoPayments } from "@x402/hono";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import {
  type ConfigureHumanProofServerOptions,
  configureHumanProofServer,
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  declareHumanProofExtension,
  HumanProofResourceServer,
  PublicHTTPResourceServer,
} from "../../src/server/index.ts";
import { ASSET, NETWORK, type ScriptedFacilitator } from "./paid-http-server.ts";

export const FRAMEWORKS = ["express", "hono", "fastify"] as const;
export type Framework = (typeof FRAMEWORKS)[number];

export const PAY_TO = "0x00000000000000000000000000000000000000aa";
export const STANDARD_PRICE = "10000";
export const HUMAN_PRICE = "1000";
export const MAX_USE = 5;

/** What the handlers did: runs per route, and the side effects of `POST /orders`. */
export class Handlers {
  weather = 0;
  orders = 0;
  private started: Array<() => void> = [];

  /**
   * `POST /orders`: tells the test it started, waits until its client is gone (`socket` closed), then has its
   * side effect, as a slow upstream call finishing after the caller hung up would.
   */
  async order(socket: Socket): Promise<void> {
    for (const notify of this.started.splice(0)) notify();
    if (!socket.destroyed) await once(socket, "close");
    this.orders += 1;
  }

  /** Resolves once a `POST /orders` handler is running. */
  orderStarted(): Promise<void> {
    return new Promise((resolve) => this.started.push(resolve));
  }
}

const price = (amount: string) => ({ amount, asset: ASSET, extra: { name: "USD Coin", version: "2" } });
const tier = (amount: string, extra?: Record<string, unknown>): PaymentOption => ({
  scheme: "exact",
  network: NETWORK as Network,
  payTo: PAY_TO,
  price: price(amount),
  ...(extra ? { extra } : {}),
});

/** docs/sdk.md's `paid-route.mjs`, plus a `POST` route whose handler has a side effect. */
export function docsRoutes(): RoutesConfig {
  const humanTier = tier(HUMAN_PRICE, {
    requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA],
    maxUse: MAX_USE,
    scope: "weather",
  });
  const extensions = { "human-proof": declareHumanProofExtension({ expirationSeconds: 900 }) };
  return {
    "GET /weather": {
      accepts: [tier(STANDARD_PRICE), humanTier],
      description: "Weather now",
      mimeType: "application/json",
      extensions,
    },
    "POST /orders": {
      accepts: [tier(STANDARD_PRICE)],
      description: "Places an order",
      mimeType: "application/json",
    },
  };
}

export type DocsServer = { url: string; handlers: Handlers; server: Server; close(): Promise<void> };

/**
 * One of the docs' servers on a free 127.0.0.1 port. `options` go to `configureHumanProofServer`, as the docs'
 * `paid-route.mjs` passes its stores.
 */
export async function startDocsServer(
  framework: Framework,
  facilitator: ScriptedFacilitator,
  options: ConfigureHumanProofServerOptions,
  handlers = new Handlers(),
): Promise<DocsServer> {
  const resourceServer = new HumanProofResourceServer(facilitator).register(NETWORK, new ExactEvmScheme());
  configureHumanProofServer(resourceServer, options);
  const listening = await listen(framework, resourceServer, handlers);
  return { ...listening, handlers };
}

async function listen(
  framework: Framework,
  resourceServer: x402ResourceServer,
  handlers: Handlers,
): Promise<Omit<DocsServer, "handlers">> {
  const routes = docsRoutes();
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const httpServer = new PublicHTTPResourceServer(resourceServer, routes, { publicUrl });
  let server: Server;
  if (framework === "express") {
    server = express()
      .use(expressPayments(httpServer))
      .get("/weather", (_req, res) => {
        handlers.weather += 1;
        res.json({ city: "Zurich", temperatureC: 7 });
      })
      .post("/orders", async (req, res) => {
        await handlers.order(req.socket);
        res.json({ ordered: true });
      })
      .listen(port, "127.0.0.1");
    await once(server, "listening");
  } else if (framework === "hono") {
    const app = new Hono()
      .use(honoPayments(httpServer))
      .get("/weather", (c) => {
        handlers.weather += 1;
        return c.json({ city: "Zurich", temperatureC: 7 });
      })
      .post("/orders", async (c) => {
        await handlers.order((c.env as { incoming: IncomingMessage }).incoming.socket);
        return c.json({ ordered: true });
      });
    server = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }) as Server;
    await once(server, "listening");
  } else {
    const app = Fastify();
    await installPaymentGate(app, { publicUrl, httpServer });
    app.get("/weather", async () => {
      handlers.weather += 1;
      return { city: "Zurich", temperatureC: 7 };
    });
    app.post("/orders", async (request) => {
      await handlers.order(request.raw.socket);
      return { ordered: true };
    });
    await app.listen({ port, host: "127.0.0.1" });
    server = app.server;
  }
  return {
    url: publicUrl,
    server,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
