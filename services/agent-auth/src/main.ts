import { splitList } from "@humanpass/config";
import { followChainInvalidations } from "@humanpass/event-bus";
import { runService, systemClock } from "@humanpass/service";
import { buildApp } from "./app.ts";
import { createRegistry } from "./attestations/index.ts";
import { AgentAuthEnv, publicTerms } from "./config.ts";
import { migrations } from "./db/migrations/index.ts";
import { SCHEMA } from "./db/schema.ts";
import { createNonceStore } from "./nonces/nonce-store.ts";
import { noncePurgeJob } from "./nonces/purge.ts";

await runService({
  name: "agent-auth",
  schema: SCHEMA,
  migrations,
  env: AgentAuthEnv,
  streams: ["AGENT_AUTH", "CHAIN"],
  publishes: true,
  async start({ config, logger, db, nats, topology, readiness, http, metrics }) {
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
    const app = await buildApp({
      logger,
      db,
      topology,
      terms,
      resolver,
      oneClaimPerHuman: config.ONE_CLAIM_PER_HUMAN,
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
      purges: [noncePurgeJob(createNonceStore(db, systemClock), config.NONCE_PURGE_INTERVAL_MS)],
    };
  },
});
