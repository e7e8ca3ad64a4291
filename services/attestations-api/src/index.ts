export { API_PREFIX, type AppDeps, buildApp } from "./app";
export { AttestationsApiEnv, SCHEMA, SERVICE_NAME } from "./config";
export { migrations } from "./db/migrations";
export { readSessionSettings } from "./db/session-settings";
export type { Database, Queryable } from "./db/types";
export { decodeAttestationData, decodedDataJson, schemaFields } from "./decode";
export {
  applyAttestationRecorded,
  applyAttestationRevoked,
  applyBlocksReverted,
  applyChainEvent,
  applySchemaRegistered,
  applyUniquenessVerified,
  applyVerifierEvent,
} from "./events/apply";
export { DEFAULT_DURABLES, type ReadModelDurables, startReadModelConsumers } from "./events/consumers";
export { type RebuildOptions, type RebuildResult, rebuildReadModel } from "./reindex/rebuild";
