import { splitList } from "@humanpass/config";
import { runService } from "@humanpass/service";
import { buildApp } from "./app.ts";
import { AttestationsApiEnv, SCHEMA, SERVICE_NAME } from "./config.ts";
import { migrations } from "./db/migrations/index.ts";
import { readSessionSettings } from "./db/session-settings.ts";
import { startReadModelConsumers } from "./events/consumers.ts";

await runService({
  name: SERVICE_NAME,
  schema: SCHEMA,
  migrations,
  env: AttestationsApiEnv,
  streams: ["CHAIN", "VERIFIER"],
  publishes: false,
  dbSettings: (config) => readSessionSettings(config.READ_TIMEOUT_MS),
  async start({ config, logger, db, pool, nats, topology, readiness, http, metrics }) {
    const app = await buildApp({
      pool,
      logger,
      readiness,
      http,
      metrics,
      corsOrigins: splitList(config.CORS_ORIGINS),
      rateLimit: config.RATE_LIMIT_ENABLED
        ? { max: config.RATE_LIMIT_MAX, timeWindowMs: config.RATE_LIMIT_WINDOW_MS }
        : false,
    });
    const consumers = await startReadModelConsumers({
      db,
      nats,
      topology,
      logger,
      meter: metrics.meter,
      durables: { chain: config.CHAIN_DURABLE, verifier: config.VERIFIER_DURABLE },
    });
    return { app, port: config.PORT, host: config.HOST, consumers };
  },
});
