export { API_PREFIX, type AppDeps, buildApp } from "./app.ts";
export { AttestationsApiEnv, SCHEMA, SERVICE_NAME } from "./config.ts";
export { migrations } from "./db/migrations/index.ts";
export { readSessionSettings } from "./db/session-settings.ts";
export type { Database, Queryable } from "./db/types.ts";
export { decodeAttestationData, decodedDataJson, schemaFields } from "./decode.ts";
export {
  applyAttestationRecorded,
  applyAttestationRevoked,
  applyBlocksReverted,
  applyChainEvent,
  applySchemaRegistered,
  applyUniquenessVerified,
  applyVerifierEvent,
} from "./events/apply.ts";
export { DEFAULT_DURABLES, type ReadModelDurables, startReadModelConsumers } from "./events/consumers.ts";
export { type RebuildOptions, type RebuildResult, rebuildReadModel } from "./reindex/rebuild.ts";
export { createReadModelSeeder, type ReadModelSeeder } from "./seed.ts";
