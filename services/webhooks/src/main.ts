import { splitList } from "@humanpass/config";
import { runService, systemClock } from "@humanpass/service";
import { buildApp } from "./app.ts";
import { checkSettings, WebhooksEnv } from "./config.ts";
import { migrations } from "./db/migrations/index.ts";
import { SCHEMA } from "./db/schema.ts";
import { createAddressPolicy } from "./delivery/address-policy.ts";
import { createDeliveryMetrics, observeDeliveries } from "./delivery/metrics.ts";
import { createDeliveryWorker } from "./delivery/worker.ts";
import { startIngest } from "./events/ingest.ts";

await runService({
  name: "webhooks",
  schema: SCHEMA,
  migrations,
  // Short statements only; a claim's cost estimate grows with the endpoints and JIT compiled it (80 ms) each time.
  dbSettings: () => ({ jit: "off" }),
  env: WebhooksEnv,
  checkConfig: checkSettings,
  streams: ["VERIFIER", "CHAIN", "AGENT_AUTH", "PAYMENTS"],
  publishes: false,
  async start({ config, logger, db, nats, topology, readiness, http, metrics }) {
    const policy = createAddressPolicy(splitList(config.WEBHOOK_ALLOWED_NETWORKS));
    const app = await buildApp({
      logger,
      db,
      policy,
      adminToken: config.ADMIN_TOKEN,
      readiness,
      http,
      metrics,
      rateLimit: { max: config.RATE_LIMIT_MAX, timeWindowMs: config.RATE_LIMIT_WINDOW_MS },
    });
    const consumers = await startIngest({
      db,
      nats,
      topology,
      logger,
      clock: systemClock,
      meter: metrics.meter,
    });
    const worker = createDeliveryWorker({
      db,
      policy,
      logger,
      clock: systemClock,
      retryWindowMs: config.WEBHOOK_RETRY_WINDOW_MS,
      attemptTimeoutMs: config.WEBHOOK_TIMEOUT_MS,
      concurrency: config.WEBHOOK_CONCURRENCY,
      endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
      metrics: createDeliveryMetrics(metrics.meter),
    });
    observeDeliveries(metrics.meter, db, config.WEBHOOK_ENDPOINT_CONCURRENCY);
    worker.start(config.WEBHOOK_IDLE_MS);
    return {
      app,
      port: config.PORT,
      host: config.HOST,
      consumers,
      stop: [["delivery worker", () => worker.stop()]],
    };
  },
});
