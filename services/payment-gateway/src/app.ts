import { createHttpApp, type HttpApp, type HttpServerSettings } from "@humanpass/http";
import { paywallInstructions } from "@humanpass/human-proof";
import { createMetrics, type ServiceMetrics } from "@humanpass/telemetry";
import { installPaymentGate } from "@humanpass/x402-fastify";
import { SERVICE_NAME } from "./config.ts";
import { countFacilitatorErrors, paymentObserver } from "./metrics.ts";
import { catalogRoutes } from "./routes/catalog.ts";
import { paidRoutes } from "./routes/paid-routes.ts";
import { createPaymentServer, type PaymentServerOptions } from "./x402/payment-server.ts";

export interface AppDeps extends PaymentServerOptions {
  /** Where clients reach the gateway: the origin of every resource URL and human-proof challenge. */
  publicUrl: string;
  /** Page for unpaid browsers; the human-proof instructions page when absent. */
  paywallHtml?: string;
  readiness?: Record<string, () => Promise<unknown>>;
  corsOrigins?: string[];
  rateLimit: { max: number; timeWindowMs: number } | false;
  /** TRUST_PROXY and the HTTP timeouts. */
  http?: HttpServerSettings;
  /** The service's instruments (served at /metrics); a set of the app's own when absent. */
  metrics?: ServiceMetrics;
}

/** The gateway: paid routes behind x402 with the human-proof tiers. No side effects beyond asking the facilitator what it supports. */
export async function buildApp(deps: AppDeps): Promise<HttpApp> {
  const metrics = deps.metrics ?? createMetrics({ serviceName: SERVICE_NAME });
  const app = await createHttpApp({
    ...deps.http,
    logger: deps.logger,
    readiness: deps.readiness,
    corsOrigins: deps.corsOrigins,
    rateLimit: deps.rateLimit,
    openapi: {
      title: "humanpass payment gateway",
      version: "1.0.0",
      description:
        "Resources paid through x402. Each route offers price tiers; tiers with `requiredAttestations` are for agents backed by a verified human (signed human proof in the payment payload), optionally capped per human by `maxUse`.",
    },
    metrics,
  });
  const httpServer = createPaymentServer({
    ...deps,
    facilitator: countFacilitatorErrors(deps.facilitator, metrics.meter),
  });
  await installPaymentGate(app, {
    httpServer,
    publicUrl: deps.publicUrl,
    paywall: paywallInstructions(deps.paywallHtml),
    observer: paymentObserver(metrics.meter),
  });
  await catalogRoutes(app, deps.routesFile);
  await paidRoutes(app, deps.routesFile.routes);
  return app;
}
