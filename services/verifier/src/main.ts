import { fileURLToPath } from "node:url";
import { splitList } from "@humanpass/config";
import { runService, systemClock } from "@humanpass/service";
import { buildVerifierApp } from "./app.ts";
import { isLoopbackHost, VerifierEnv, verificationSettings, verifierSettings } from "./config.ts";
import { migrations } from "./db/migrations/index.ts";
import { SCHEMA } from "./db/schema.ts";
import { sessionPurgeJob } from "./session-purger.ts";
import { createHttpDocumentFetcher } from "./verification/document-loader.ts";
import { createVerificationPool } from "./verification/verification-pool.ts";

const bundledContextsDir = fileURLToPath(new URL("../contexts", import.meta.url));

await runService({
  name: "verifier",
  schema: SCHEMA,
  migrations,
  env: VerifierEnv,
  streams: ["VERIFIER"],
  publishes: true,
  async start({ config, logger, db, topology, readiness, http, metrics, outboxCommitted }) {
    const settings = verifierSettings(config);
    const verification = verificationSettings(config, bundledContextsDir);
    if (isLoopbackHost(settings.hostUrl)) {
      logger.warn(
        { hostUrl: settings.hostUrl },
        "HOST_URL is a loopback address: wallets on other devices cannot reach the callback",
      );
    }
    if (Object.keys(verification.networks).length === 0) {
      logger.warn(
        "no Billions network configured (BILLIONS_MAIN_* / BILLIONS_TEST_*): every callback will fail state resolution",
      );
    }
    const pool = createVerificationPool({
      size: verification.workers,
      chains: verification.networks,
      fetchRemoteDocument: createHttpDocumentFetcher({ ipfsGateway: verification.ipfsGateway }),
      localContextDirs: verification.contextsDirs,
      proofMaxAgeMs: verification.proofMaxAgeMs,
      niceness: verification.workerNiceness,
      engine: verification.engine,
      meter: metrics.meter,
      onWorkerError: (error) => logger.error({ err: error.message }, "verification worker failed"),
      // `per-pair` under an mcl engine: the installed mcl-wasm is not the one whose multi-Miller loop was checked.
      onWorkerReady: (index, { millerLoop }) =>
        logger.info({ worker: index, millerLoop }, "verification worker ready"),
    });
    const app = await buildVerifierApp({
      logger,
      db,
      topology,
      settings,
      verifier: pool,
      outboxCommitted,
      readiness,
      http,
      metrics,
      corsOrigins: splitList(config.CORS_ORIGINS),
      rateLimit: { max: config.RATE_LIMIT_MAX, timeWindowMs: config.RATE_LIMIT_WINDOW_MS },
    });
    // Ready once one worker can verify; the others load the iden3 libraries behind it. This thread never loads them
    // (authorization requests are written without them, the workers resolve states), so it has nothing to stall on.
    await pool.ready();
    return {
      app,
      port: config.PORT,
      stop: [["verification workers", () => pool.close()]],
      purges: [sessionPurgeJob({ db, clock: systemClock, retentionMs: settings.sessionRetentionMs })],
    };
  },
});
