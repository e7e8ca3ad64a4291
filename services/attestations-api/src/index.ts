export { API_PREFIX, type AppDeps, buildApp } from "./app";
export { AttestationsApiEnv, SCHEMA, SERVICE_NAME } from "./config";
export { migrations } from "./db/migrations";
export type { ReadPool } from "./db/prepared";
export { createReadPool } from "./db/read-pool";
export type { Database } from "./db/types";
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
