// One server for the benchmark, in its own process so the load generator does not share its event loop:
//   api  — the attestations API (buildApp: rate limiting on, CORS, OpenAPI) over the bench database
//   bare — a bare Fastify route returning a small JSON object, the reference for what the machine can do
// Prints `port <n>` on stdout once listening.

import { buildApp, readSessionSettings, SCHEMA } from "@humanpass/attestations-api";
import { createPool } from "@humanpass/db";
import Fastify from "fastify";
import pino from "pino";

const mode = process.argv[2];
const logger = pino({ level: "warn" });

async function start() {
  if (mode === "bare") {
    const app = Fastify();
    app.get("/bare", async () => ({ ok: true }));
    return app;
  }
  const max = Number(process.env.BENCH_POOL ?? 10);
  const pool = createPool({
    connectionString: process.env.DATABASE_URL!,
    schema: SCHEMA,
    max,
    settings: readSessionSettings(),
  });
  // Limiting stays on (its cost is part of every request); the limit is out of reach for one client.
  return buildApp({
    pool,
    logger,
    rateLimit: { max: 1_000_000_000, timeWindowMs: 60_000 },
    corsOrigins: ["*"],
  });
}

const app = await start();
await app.listen({ port: 0, host: "127.0.0.1" });
const address = app.server.address();
process.stdout.write(`port ${typeof address === "object" && address ? address.port : 0}\n`);
process.on("SIGTERM", () => {
  app.close().finally(() => process.exit(0));
});
