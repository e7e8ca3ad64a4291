import { splitList } from "@humanpass/config";
import { followChainInvalidations } from "@humanpass/event-bus";
import { createChallengeNonces } from "@humanpass/human-proof";
import { PostgresUsedNonceStore } from "@humanpass/human-proof/postgres";
import { runService, systemClock } from "@humanpass/service";
import { buildApp } from "./app.ts";
import { createRegistry } from "./attestations/index.ts";
import { AgentAuthEnv, checkSettings, publicTerms } from "./config.ts";
import { migrations } from "./db/migrations/index.ts";
import { SCHEMA } from "./db/schema.ts";
import { noncePurgeJob } from "./nonces/purge.ts";

await runService({
  name: "agent-auth",
  schema: SCHEMA,
  migrations,
  env: AgentAuthEnv,
  checkConfig: checkSettings,
  streams: ["AGENT_AUTH", "CHAIN"],
  publishes: true,
  async start({ config, logger, db, pool, nats, topology, readiness, http, metrics, outboxCommitted }) {
    const terms = publicTerms(config);
    const { resolver, cache } = createRegistry({
      attestationsApiUrl: config.ATTESTATIONS_API_URL,
      timeoutMs: config.ATTESTATIONS_API_TIMEOUT_MS,
      retries: config.ATTESTATIONS_API_RETRIES,
      ownershipSchema: terms.ownershipSchema,
      cacheTtlMs: config.ATTESTATION_CACHE_TTL_MS,
      cacheMaxEntries: config.ATTESTATION_CACHE_MAX_ENTRIES,
      clock: systemClock,
      logger,
    });
    if (!config.HUMAN_PROOF_NONCE_KEYS)
      logger.warn(
        "HUMAN_PROOF_NONCE_KEYS unset: this process recognises only the challenge nonces it issued itself; development only",
      );
    const usedNonces = new PostgresUsedNonceStore(pool);
    const app = await buildApp({
      logger,
      db,
      usedNonces,
      challengeNonces: createChallengeNonces({ keys: splitList(config.HUMAN_PROOF_NONCE_KEYS ?? "") }),
      topology,
      terms,
      resolver,
      oneClaimPerHuman: config.ONE_CLAIM_PER_HUMAN,
      outboxCommitted,
      readiness,
      http,
      metrics,
      corsOrigins: splitList(config.CORS_ORIGINS),
      rateLimit: { max: config.RATE_LIMIT_MAX, timeWindowMs: config.RATE_LIMIT_WINDOW_MS },
    });
    const invalidations = await followChainInvalidations({
      nats,
      topology,
      logger,
      cache,
      meter: metrics.meter,
    });
    logger.info(
      { resource: terms.resource, domain: terms.domain, oneClaimPerHuman: config.ONE_CLAIM_PER_HUMAN },
      "agent-auth ready",
    );
    return {
      app,
      port: config.PORT,
      host: config.HOST,
      stop: [["chain invalidations", () => invalidations.stop()]],
      purges: [noncePurgeJob(usedNonces, config.NONCE_PURGE_INTERVAL_MS)],
    };
  },
});
