import { splitList } from "@humanpass/config";
import { runService } from "@humanpass/service";
import { buildApp } from "./app";
import { AttestationsApiEnv, SCHEMA, SERVICE_NAME } from "./config";
import { migrations } from "./db/migrations";
import { createReadPool } from "./db/read-pool";
import { startReadModelConsumers } from "./events/consumers";

await runService({
  name: SERVICE_NAME,
  schema: SCHEMA,
  migrations,
  env: AttestationsApiEnv,
  streams: ["CHAIN", "VERIFIER"],
  publishes: false,
  async start({ config, logger, db, nats, topology, readiness, http }) {
    // Reads run as prepared statements, which kysely's driver cannot do: a second pool, for the routes only.
    const pool = createReadPool({
      connectionString: config.DATABASE_URL,
      max: config.DB_POOL_MAX,
      applicationName: `${SERVICE_NAME}-read`,
      statementTimeoutMs: config.READ_TIMEOUT_MS,
    });
    pool.on("error", (err) => logger.warn({ err: err.message }, "idle read connection lost"));
    const app = await buildApp({
      db,
      pool,
      logger,
      readiness,
      http,
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
      durables: { chain: config.CHAIN_DURABLE, verifier: config.VERIFIER_DURABLE },
    });
    return { app, port: config.PORT, host: config.HOST, consumers, stop: [["read pool", () => pool.end()]] };
  },
});
