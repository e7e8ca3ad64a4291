import { createHttpApp, type HttpApp, type HttpServerSettings } from "@humanpass/http";
import type { Logger } from "pino";
import type { IndexerMetrics } from "./metrics.ts";

export interface AppDeps {
  logger: Logger;
  metrics: IndexerMetrics;
  /** /readyz checks (Postgres, NATS, the chain RPC). */
  readiness: Record<string, () => Promise<unknown>>;
  /** TRUST_PROXY and the HTTP timeouts. */
  http?: HttpServerSettings;
}

/** Health, readiness and Prometheus metrics; the indexer itself has no API. */
export async function buildApp(deps: AppDeps): Promise<HttpApp> {
  const app = await createHttpApp({
    ...deps.http,
    logger: deps.logger,
    readiness: deps.readiness,
    rateLimit: false,
    metrics: deps.metrics.service,
  });
  return app;
}
