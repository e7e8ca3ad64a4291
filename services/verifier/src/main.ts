import { fileURLToPath } from "node:url";
import { splitList } from "@humanpass/config";
import { runService } from "@humanpass/service";
import { buildVerifierApp } from "./app.ts";
import { systemClock } from "./clock.ts";
import { isLoopbackHost, VerifierEnv, verificationSettings, verifierSettings } from "./config.ts";
import { migrations } from "./db/migrations/index.ts";
import { SCHEMA } from "./db/schema.ts";
import { startSessionPurger } from "./session-purger.ts";
import { chainStateResolvers } from "./state-resolvers.ts";
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
  async start({ config, logger, db, topology, readiness, http, metrics }) {
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
      stateResolvers: chainStateResolvers(verification.networks),
      fetchRemoteDocument: createHttpDocumentFetcher({ ipfsGateway: verification.ipfsGateway }),
      localContextDirs: verification.contextsDirs,
      proofMaxAgeMs: verification.proofMaxAgeMs,
      niceness: verification.workerNiceness,
      engine: verification.engine,
      meter: metrics.meter,
      onWorkerError: (error) => logger.error({ err: error.message }, "verification worker failed"),
      onWorkerReady: (index) => logger.info({ worker: index }, "verification worker ready"),
    });
    // This thread loads the iden3 libraries (authorization requests, state look-ups) while the first worker thread
    // loads its own on the other core, so neither the first session nor the first callback stalls the event loop on
    // them; the app listens once both are done, and the other workers load theirs behind (the pool's ready()).
    const iden3Loaded = import("./authorization-request.ts");
    const app = await buildVerifierApp({
      logger,
      db,
      topology,
      settings,
      verifier: pool,
      readiness,
      http,
      metrics,
      corsOrigins: splitList(config.CORS_ORIGINS),
      rateLimit: { max: config.RATE_LIMIT_MAX, timeWindowMs: config.RATE_LIMIT_WINDOW_MS },
    });
    await Promise.all([pool.ready(), iden3Loaded]);
    const purger = startSessionPurger({
      db,
      clock: systemClock,
      retentionMs: settings.sessionRetentionMs,
      logger,
    });
    return {
      app,
      port: config.PORT,
      stop: [
        ["session purger", () => purger.stop()],
        ["verification workers", () => pool.close()],
      ],
    };
  },
});
