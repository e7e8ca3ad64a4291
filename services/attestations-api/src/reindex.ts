import { CommonEnv, loadConfig } from "@humanpass/config";
import { createDb } from "@humanpass/db";
import { connectNats, jetstreamManager, streamName, waitForStreams } from "@humanpass/event-bus";
import { createLogger } from "@humanpass/telemetry";
import { Type } from "@sinclair/typebox";
import { AttestationsApiEnv, SCHEMA, SERVICE_NAME } from "./config.ts";
import { migrateReadModel } from "./db/migrate.ts";
import { rebuildReadModel } from "./reindex/rebuild.ts";

/** `npm run -w @humanpass/attestations-api reindex`: drops the read model and replays the JetStream streams. */
const config = (() => {
  try {
    return loadConfig(Type.Object({ ...CommonEnv, ...AttestationsApiEnv.properties }));
  } catch (e) {
    process.stderr.write(`reindex: ${(e as Error).message}\n`);
    process.exit(78);
  }
})();
const logger = createLogger({ name: `${SERVICE_NAME}-reindex`, level: config.LOG_LEVEL });
const db = createDb<any>({
  connectionString: config.DATABASE_URL,
  schema: SCHEMA,
  max: 4,
  applicationName: `${SERVICE_NAME}-reindex`,
});
const nats = await connectNats(config.NATS_URL, logger, `${SERVICE_NAME}-reindex`, {
  user: config.NATS_USER,
  pass: config.NATS_PASSWORD,
  tlsCaFile: config.NATS_TLS_CA,
});
let code = 0;
try {
  await migrateReadModel(db, config.DATABASE_URL);
  const topology = { prefix: config.EVENTS_PREFIX };
  await waitForStreams(
    await jetstreamManager(nats),
    (["CHAIN", "VERIFIER"] as const).map((s) => streamName(topology, s)),
    { logger, timeoutMs: config.NATS_STREAMS_WAIT_MS },
  );
  const result = await rebuildReadModel({
    db,
    nats,
    topology,
    logger,
    durables: { chain: config.CHAIN_DURABLE, verifier: config.VERIFIER_DURABLE },
  });
  if (result.deadLettered > 0) code = 2;
} catch (e) {
  logger.error({ err: e }, "reindex failed");
  code = 1;
} finally {
  await nats.drain().catch(() => {});
  await db.destroy();
}
process.exit(code);
