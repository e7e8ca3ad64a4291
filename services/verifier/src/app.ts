import type { Kysely } from "@humanpass/db";
import type { Topology } from "@humanpass/event-bus";
import { createHttpApp, type HttpApp, type HttpServerSettings } from "@humanpass/http";
import { type Clock, systemClock } from "@humanpass/service";
import { createMetrics, type Logger, type ServiceMetrics } from "@humanpass/telemetry";
import type { VerifierSettings } from "./config.ts";
import type { VerifierDatabase } from "./db/schema.ts";
import { createSession, findLiveSessionRequest, sessionStatus } from "./db/sessions.ts";
import { recordVerification } from "./db/verifications.ts";
import { callbackRoute } from "./routes/callback.ts";
import { demoRoutes } from "./routes/demo.ts";
import type { RouteDeps } from "./routes/deps.ts";
import { statusRoute } from "./routes/status.ts";
import { verificationRequestRoute } from "./routes/verification-request.ts";
import type { TokenVerifier } from "./verification/token-verifier.ts";

export interface VerifierAppOptions {
  logger: Logger;
  db: Kysely<VerifierDatabase>;
  topology: Topology;
  settings: VerifierSettings;
  /** Verifies a callback token against a stored request: the worker pool, or a test double. */
  verifier: TokenVerifier;
  clock?: Clock;
  readiness?: Record<string, () => Promise<unknown>>;
  /** TRUST_PROXY and the HTTP timeouts. */
  http?: HttpServerSettings;
  /** Allowed origins; `["*"]` only when any origin is explicitly wanted. */
  corsOrigins?: string[];
  rateLimit?: { max: number; timeWindowMs: number } | false;
  /** Extra session-id source for tests that need a known id. */
  drawSessionId?: () => number;
  /** The service's instruments (served at /metrics); a set of the app's own when absent. */
  /** Wakes this process's outbox relay after a commit that wrote events (`ServiceRuntime.outboxCommitted`). */
  outboxCommitted?: () => void;
  metrics?: ServiceMetrics;
}

/** Builds the verifier's HTTP app from its dependencies; connects nothing and starts nothing. */
export async function buildVerifierApp(options: VerifierAppOptions): Promise<HttpApp> {
  const { db, topology } = options;
  const metrics = options.metrics ?? createMetrics({ serviceName: "verifier" });
  const app = await createHttpApp({
    ...options.http,
    logger: options.logger,
    readiness: options.readiness,
    corsOrigins: options.corsOrigins,
    rateLimit: options.rateLimit ?? { max: 100, timeWindowMs: 60_000 },
    openapi: { title: "humanpass verifier", description: "Proof of Uniqueness verifier (spec 1)" },
    metrics,
  });
  const deps: RouteDeps = {
    settings: options.settings,
    clock: options.clock ?? systemClock,
    verifier: options.verifier,
    instruments: verifierInstruments(metrics),
    sessions: {
      create: (session) => createSession(db, session, options.drawSessionId),
      liveRequest: (sessionId, now) => findLiveSessionRequest(db, sessionId, now),
      status: (sessionId, now) => sessionStatus(db, sessionId, now),
    },
    recordVerification: async (input) => {
      const outcome = await recordVerification(db, topology, input);
      if (outcome === "recorded") options.outboxCommitted?.();
      return outcome;
    },
  };
  verificationRequestRoute(app, deps);
  statusRoute(app, deps);
  callbackRoute(app, deps);
  demoRoutes(app, deps);
  return app;
}

const CALLBACK_OUTCOMES = [
  "verified",
  "invalid_session",
  "token_rejected",
  "no_nullifier_proof",
  "already_verified",
];

function verifierInstruments(metrics: ServiceMetrics): RouteDeps["instruments"] {
  const callbacks = metrics.meter.createCounter("humanpass_verifier_callbacks_total", {
    description: "Wallet callbacks, by outcome",
    unit: "{callback}",
  });
  // Every outcome at 0 from the start: a ratio of rejections needs its series before the first one.
  for (const outcome of CALLBACK_OUTCOMES) callbacks.add(0, { outcome });
  return {
    callbacks,
    verificationDuration: metrics.meter.createHistogram("humanpass_verifier_verification_duration_seconds", {
      description: "Verification of a callback's token, queue wait included, by outcome",
      unit: "s",
      advice: { explicitBucketBoundaries: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60] },
    }),
  };
}
