import type { HttpApp } from "@humanpass/http";
import { createMetrics, startTelemetry } from "@humanpass/telemetry";
import { sampleValue, unboundedLabels } from "@humanpass/testing";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertSession } from "../src/db/sessions.ts";
import { createVerificationPool, type VerificationPool } from "../src/verification/verification-pool.ts";
import {
  ANY_PROOF_AGE_MS,
  beta1,
  FIXTURE_CONTEXTS_DIR,
  latestStateResolvers,
  stable,
} from "./support/fixtures.ts";
import { type Backend, startApp, startBackend, testClock } from "./support/harness.ts";
import { testEngine } from "./support/settings.ts";

const exporter = new InMemorySpanExporter();
// Before the app is built: Fastify's instrumentation joins apps created from now on.
const telemetry = startTelemetry({ serviceName: "verifier", spanExporter: exporter });
const metrics = createMetrics({ serviceName: "verifier" });
let backend: Backend;
let pool: VerificationPool;
let app: HttpApp;
const time = testClock();

beforeAll(async () => {
  backend = await startBackend("verifier_metrics");
  pool = createVerificationPool({
    size: 1,
    stateResolvers: latestStateResolvers(stable.network, beta1.network),
    localContextDirs: [FIXTURE_CONTEXTS_DIR],
    proofMaxAgeMs: ANY_PROOF_AGE_MS,
    engine: testEngine,
    meter: metrics.meter,
  });
  await pool.ready();
  app = await startApp(backend, { verifier: pool, clock: time.clock, metrics });
});

afterAll(async () => {
  await app?.close();
  await pool?.close();
  await backend?.close();
  await metrics.shutdown();
  await telemetry.shutdown();
});

const callback = (sessionId: string, token: string) =>
  app.inject({
    method: "POST",
    url: `/api/callback?sessionId=${sessionId}`,
    headers: { "content-type": "text/plain" },
    payload: token,
  });

describe("verifier /metrics and the verification span", () => {
  it("counts callbacks by outcome, times verifications, and exposes queue depth and batch size", async () => {
    const now = time.now();
    await insertSession(backend.db, stable.sessionId, stable.request, now, new Date(now.getTime() + 60_000));
    expect((await callback(String(stable.sessionId), stable.token)).statusCode).toBe(200);
    expect((await callback("999999", stable.token)).statusCode).toBe(400);

    const text = (await app.inject({ url: "/metrics" })).body;
    expect(sampleValue(text, "humanpass_verifier_callbacks_total", { outcome: "verified" })).toBe(1);
    expect(sampleValue(text, "humanpass_verifier_callbacks_total", { outcome: "invalid_session" })).toBe(1);
    expect(
      sampleValue(text, "humanpass_verifier_verification_duration_seconds_count", { outcome: "ok" }),
    ).toBe(1);
    expect(sampleValue(text, "humanpass_verifier_worker_queue_depth")).toBe(0);
    if (testEngine === "batch") {
      expect(sampleValue(text, "humanpass_verifier_verification_batch_size_count")).toBeGreaterThanOrEqual(1);
    }
    expect(
      sampleValue(text, "http_server_request_duration_count", {
        http_route: "/api/callback",
        http_request_method: "POST",
        http_response_status_code: "200",
      }),
    ).toBe(1);
    // The session id, the DID and the nullifier went through: none became a label.
    expect(unboundedLabels(text)).toEqual([]);
  });

  it("records the worker's proof verification as a span in its callback's trace", async () => {
    const spans = exporter.getFinishedSpans();
    const verification = spans.filter((s) => s.name === "verify proof");
    expect(verification.length).toBeGreaterThanOrEqual(1);
    const [first] = verification as [ReadableSpan];
    const parent = spans.find((s) => s.spanContext().spanId === first.parentSpanContext?.spanId);
    expect(parent).toBeDefined();
    expect(parent?.spanContext().traceId).toBe(first.spanContext().traceId);
    // Its trace is the callback request's.
    const traceSpans = spans.filter((s) => s.spanContext().traceId === first.spanContext().traceId);
    expect(traceSpans.some((s) => JSON.stringify(s.attributes).includes("/api/callback"))).toBe(true);
    expect(first.endTime[0] * 1e3 + first.endTime[1] / 1e6).toBeGreaterThanOrEqual(
      first.startTime[0] * 1e3 + first.startTime[1] / 1e6,
    );
  });
});
