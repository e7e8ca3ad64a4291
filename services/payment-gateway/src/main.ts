import { readFileSync } from "node:fs";
import { splitList } from "@humanpass/config";
import { followChainInvalidations } from "@humanpass/event-bus";
import {
  cachePositiveLookups,
  createChallengeNonces,
  createPoUVerifier,
  InMemoryHumanUsageStorage,
  InMemoryPaymentReservations,
  InMemoryUsedNonceStore,
  sequentialAdmissions,
} from "@humanpass/human-proof";
import { runService } from "@humanpass/service";
import { buildApp } from "./app.ts";
import { checkSettings, PaymentGatewayEnv, SCHEMA, SERVICE_NAME } from "./config.ts";
import { humanProofPurgeJob } from "./db/expiry-purge.ts";
import { GatewayHumanProofStore } from "./db/human-proof-store.ts";
import { migrations } from "./db/migrations/index.ts";
import { outboxPaymentEvents, paymentEventOf } from "./events/payment-events.ts";
import { countedLookups } from "./metrics.ts";
import { loadRoutesFile } from "./routes-file.ts";
import { createFacilitator } from "./x402/facilitator.ts";
import { networksOf } from "./x402/payment-server.ts";

await runService({
  name: SERVICE_NAME,
  schema: SCHEMA,
  migrations,
  env: PaymentGatewayEnv,
  streams: ["PAYMENTS", "CHAIN"],
  publishes: true,
  checkConfig: checkSettings,
  async start({ config, logger, db, nats, topology, readiness, http, pool, metrics, outboxCommitted }) {
    const routesFile = loadRoutesFile(config.ROUTES_FILE);
    const inMemory = config.USAGE_STORAGE === "memory";
    if (inMemory)
      logger.warn(
        "USAGE_STORAGE=memory: per-human quotas and used nonces live in this process only; development only",
      );
    const verifier = countedLookups(
      metrics.meter,
      createPoUVerifier({
        attestationsApiUrl: config.ATTESTATIONS_API_URL,
        agentOwnershipSchema: config.AGENT_OWNERSHIP_SCHEMA,
        requestTimeoutMs: config.ATTESTATIONS_API_TIMEOUT_MS,
        retries: config.ATTESTATIONS_API_RETRIES,
      }),
      (inner) =>
        cachePositiveLookups(inner, {
          ttlMs: config.LOOKUP_CACHE_TTL_MS,
          negativeTtlMs: config.NEGATIVE_LOOKUP_CACHE_TTL_MS,
          maxEntries: 100_000,
        }),
    );
    const invalidations = await followChainInvalidations({
      nats,
      topology,
      logger,
      cache: { invalidate: (revocation) => verifier.revoke(revocation), clear: () => verifier.clear() },
      meter: metrics.meter,
    });
    const events = outboxPaymentEvents(db, topology, logger, outboxCommitted);
    const store = inMemory ? undefined : new GatewayHumanProofStore(pool, topology, logger, outboxCommitted);
    const admissions =
      store ??
      sequentialAdmissions({
        nonceStore: new InMemoryUsedNonceStore(),
        storage: new InMemoryHumanUsageStorage(),
        recordEvents: async (humanProofEvents) => {
          for (const event of humanProofEvents) {
            const { type, data } = paymentEventOf(event);
            await events.emit(type, data as never);
          }
        },
      });
    if (!config.HUMAN_PROOF_NONCE_KEYS)
      logger.warn(
        "HUMAN_PROOF_NONCE_KEYS unset: this process recognises only the challenge nonces it issued itself; development only",
      );
    const challengeNonces = createChallengeNonces({ keys: splitList(config.HUMAN_PROOF_NONCE_KEYS ?? "") });
    const app = await buildApp({
      logger,
      publicUrl: config.PUBLIC_URL,
      challengeNonces,
      routesFile,
      payTo: config.EVM_ADDRESS,
      facilitator: createFacilitator(config, networksOf(routesFile), logger),
      verifier,
      admissions,
      events,
      maxProofAgeSeconds: config.MAX_PROOF_AGE_SECONDS,
      reservations: store ?? new InMemoryPaymentReservations(),
      paywallHtml: config.PAYWALL_HTML_FILE ? readFileSync(config.PAYWALL_HTML_FILE, "utf8") : undefined,
      readiness,
      http,
      metrics,
      corsOrigins: splitList(config.CORS_ORIGINS),
      rateLimit: config.RATE_LIMIT_ENABLED
        ? { max: config.RATE_LIMIT_MAX, timeWindowMs: config.RATE_LIMIT_WINDOW_MS }
        : false,
    });
    return {
      app,
      port: config.PORT,
      stop: [
        ["payment events", () => events.drain()],
        ["chain invalidations", () => invalidations.stop()],
      ],
      purges: store ? [humanProofPurgeJob(store)] : [],
    };
  },
});
