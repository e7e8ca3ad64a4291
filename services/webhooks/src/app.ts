import type { Kysely } from "@humanpass/db";
import { createHttpApp, type HttpApp, type HttpServerSettings } from "@humanpass/http";
import { type Clock, systemClock } from "@humanpass/service";
import { createMetrics, type Logger, type ServiceMetrics } from "@humanpass/telemetry";
import type { WebhooksDb } from "./db/schema.ts";
import type { AddressPolicy } from "./delivery/address-policy.ts";
import { endpointRoutes } from "./routes/endpoints.ts";

export interface AppDeps {
  logger: Logger;
  db: Kysely<WebhooksDb>;
  policy: AddressPolicy;
  adminToken: string;
  clock?: Clock;
  readiness?: Record<string, () => Promise<unknown>>;
  http?: HttpServerSettings;
  /** Per client: the admin API's token is worth guessing, and the service is otherwise unprotected. */
  rateLimit?: { max: number; timeWindowMs: number } | false;
  /** The service's instruments (served at /metrics); a set of the app's own when absent. */
  metrics?: ServiceMetrics;
}

/** The webhooks admin API. Deliveries run beside it (`createDeliveryWorker`), fed by `startIngest`. */
export async function buildApp(deps: AppDeps): Promise<HttpApp> {
  const app = await createHttpApp({
    ...deps.http,
    logger: deps.logger,
    readiness: deps.readiness,
    rateLimit: deps.rateLimit ?? false,
    metrics: deps.metrics ?? createMetrics({ serviceName: "webhooks" }),
    openapi: {
      title: "humanpass webhooks",
      description:
        "Signed webhooks (Standard Webhooks) for humanpass events: endpoints, secrets, dead letters.",
      securitySchemes: {
        adminToken: { type: "http", scheme: "bearer", description: "the service's ADMIN_TOKEN" },
      },
    },
  });
  endpointRoutes(app, {
    db: deps.db,
    policy: deps.policy,
    clock: deps.clock ?? systemClock,
    adminToken: deps.adminToken,
  });
  return app;
}
