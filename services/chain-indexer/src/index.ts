export { buildApp } from "./app";
export { createChainClient } from "./chain/client";
export { ChainIndexerEnv, type IndexerSettings, indexerSettings } from "./config";
export { migrations } from "./db/migrations";
export { type ChainIndexerDb, SCHEMA } from "./db/schema";
export { createIndexer, type Indexer, type StepResult } from "./indexer";
export { createIndexerMetrics, type IndexerMetrics } from "./metrics";
