import type { Kysely } from "@humanpass/db";
import { runService } from "@humanpass/service";
import { buildApp } from "./app.ts";
import { createChainClient } from "./chain/client.ts";
import { ChainIndexerEnv, indexerSettings } from "./config.ts";
import { migrations } from "./db/migrations/index.ts";
import { type ChainIndexerDb, SCHEMA } from "./db/schema.ts";
import { createIndexer } from "./indexer.ts";
import { createIndexerMetrics } from "./metrics.ts";

await runService({
  name: "chain-indexer",
  schema: SCHEMA,
  migrations,
  env: ChainIndexerEnv,
  streams: ["CHAIN"],
  publishes: true,
  async start({ config, logger, db, topology, readiness, http, metrics: service, outboxCommitted }) {
    const settings = indexerSettings(config);
    const client = createChainClient(config.RPC_URL, { timeoutMs: config.RPC_TIMEOUT_MS });
    const metrics = createIndexerMetrics(service);
    const indexer = createIndexer({
      db: db as Kysely<ChainIndexerDb>,
      client,
      topology,
      settings,
      logger,
      metrics,
      outboxCommitted,
    });
    await indexer.checkChain();
    const app = await buildApp({
      logger,
      metrics,
      readiness: { ...readiness, rpc: () => client.getBlockNumber({ cacheTime: 0 }) },
      http,
    });
    indexer.start();
    logger.info(
      {
        chainId: settings.chainId,
        attestationRegistry: settings.attestationRegistry,
        schemaRegistries: settings.schemaRegistries,
        startBlock: Number(settings.startBlock),
        confirmations: Number(settings.confirmations),
      },
      "chain-indexer started",
    );
    return { app, port: config.PORT, host: config.HOST, stop: [["indexer", () => indexer.stop()]] };
  },
});
