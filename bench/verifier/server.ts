// The verifier as the benchmark runs it: the real app and worker pool in its own process, state resolvers
// answering "latest" and the fixture contexts served locally (no chain, no gateway). Prints its port.
import { createDb } from "@humanpass/db";
import { createLogger } from "@humanpass/telemetry";
import {
  buildVerifierApp,
  createVerificationPool,
  SCHEMA,
  type VerifierDatabase,
  type VerifierEngine,
} from "@humanpass/verifier";
import {
  ANY_PROOF_AGE_MS,
  FIXTURE_CONTEXTS_DIR,
  latestStateResolvers,
  stable,
  testSettings,
} from "@humanpass/verifier/testing";

const logger = createLogger({ name: "verifier-bench", level: "warn" });
const db = createDb<VerifierDatabase>({
  connectionString: process.env.DATABASE_URL as string,
  schema: SCHEMA,
  max: 10,
});
const pool = createVerificationPool({
  size: process.env.VERIFIER_WORKERS ? Number(process.env.VERIFIER_WORKERS) : undefined,
  stateResolvers: latestStateResolvers(stable.network),
  localContextDirs: [FIXTURE_CONTEXTS_DIR],
  proofMaxAgeMs: ANY_PROOF_AGE_MS,
  engine: (process.env.VERIFIER_ENGINE as VerifierEngine | undefined) ?? "batch",
  niceness: process.env.VERIFIER_WORKER_NICENESS ? Number(process.env.VERIFIER_WORKER_NICENESS) : undefined,
});
await pool.ready();
const app = await buildVerifierApp({
  logger,
  db,
  topology: { prefix: "bench" },
  settings: testSettings,
  verifier: pool,
  rateLimit: false,
});
await app.listen({ port: 0, host: "127.0.0.1" });
const address = app.server.address();
process.stdout.write(`listening ${typeof address === "object" && address ? address.port : 0}\n`);
process.on("SIGTERM", () => {
  void app
    .close()
    .then(() => pool.close())
    .then(() => db.destroy())
    .finally(() => process.exit(0));
});
