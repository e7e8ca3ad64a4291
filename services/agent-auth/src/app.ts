import type { HumanLookup } from "@humanpass/attestations-client";
import type { Kysely } from "@humanpass/db";
import type { Topology } from "@humanpass/event-bus";
import { createHttpApp, type HttpApp, type HttpServerSettings } from "@humanpass/http";
import { type ChallengeNonces, createChallengeNonces, type UsedNonceStore } from "@humanpass/human-proof";
import { type Clock, systemClock } from "@humanpass/service";
import { createMetrics, type Logger, type ServiceMetrics } from "@humanpass/telemetry";
import { createClaimRecorder } from "./claims/accept-claim.ts";
import { directClaim } from "./claims/direct-claim.ts";
import { helperClaim } from "./claims/helper-claim.ts";
import type { PublicTerms } from "./config.ts";
import type { AgentAuthDb } from "./db/schema.ts";
import { claimEvents } from "./events/claim-events.ts";
import { createClaimNonces } from "./nonces/claim-nonces.ts";
import { challengeRoutes } from "./routes/challenges.ts";
import { claimRoute } from "./routes/claim.ts";

export interface AppDeps {
  logger: Logger;
  db: Kysely<AgentAuthDb>;
  /** Where redeemed nonces are spent once: `PostgresUsedNonceStore` on the service's pool. */
  usedNonces: UsedNonceStore;
  /** Issues and recognises the nonces (HUMAN_PROOF_NONCE_KEYS); default: nonces only this process recognises. */
  challengeNonces?: ChallengeNonces;
  topology: Topology;
  terms: PublicTerms;
  /** Who stands behind an agent: the attestations API client, usually behind the cache. */
  resolver: HumanLookup;
  oneClaimPerHuman: boolean;
  /** Wakes this process's outbox relay after a commit that wrote events (`ServiceRuntime.outboxCommitted`). */
  outboxCommitted?: () => void;
  clock?: Clock;
  readiness?: Record<string, () => Promise<unknown>>;
  /** TRUST_PROXY and the HTTP timeouts. */
  http?: HttpServerSettings;
  corsOrigins?: string[];
  rateLimit?: { max: number; timeWindowMs: number } | false;
  /** The service's instruments (served at /metrics); a set of the app's own when absent. */
  metrics?: ServiceMetrics;
}

/** The agent-auth HTTP app: both route sets of spec 3 on one service. No side effects beyond the app itself. */
export async function buildApp(deps: AppDeps): Promise<HttpApp> {
  const { logger, db, terms, resolver } = deps;
  const nonces = createClaimNonces({
    terms,
    challengeNonces: deps.challengeNonces ?? createChallengeNonces(),
    usedNonces: deps.usedNonces,
    clock: deps.clock ?? systemClock,
  });
  const recorder = createClaimRecorder(db, claimEvents(deps.topology), {
    resource: terms.resource,
    oneClaimPerHuman: deps.oneClaimPerHuman,
    outboxCommitted: deps.outboxCommitted,
  });

  const metrics = deps.metrics ?? createMetrics({ serviceName: "agent-auth" });
  const app = await createHttpApp({
    ...deps.http,
    logger,
    readiness: deps.readiness,
    corsOrigins: deps.corsOrigins,
    rateLimit: deps.rateLimit ?? false,
    openapi: {
      title: "humanpass agent-auth",
      description:
        "Proves that an agent controls its key and that a verified human stands behind it (spec 3).",
    },
    metrics,
  });
  challengeRoutes(app, { terms, nonces });
  await claimRoute(app, {
    helper: helperClaim({ terms, nonces, resolver, recorder, logger }),
    direct: directClaim({ terms, nonces, resolver, recorder, logger }),
    claims: metrics.meter.createCounter("humanpass_agent_auth_claims_total", {
      description: "Claims, by path (helper or direct) and outcome (accepted or the refusal's code)",
      unit: "{claim}",
    }),
  });
  return app;
}
