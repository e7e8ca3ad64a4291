import type { HttpApp } from "@humanpass/http";
import { eventually } from "@humanpass/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertSession } from "../src/db/sessions.ts";
import { createVerificationPool, type VerificationPool } from "../src/verification/verification-pool.ts";
import { ANY_PROOF_AGE_MS, FIXTURE_CONTEXTS_DIR, latestStateResolvers, stable } from "./support/fixtures.ts";
import { type Backend, startApp, startBackend, testClock } from "./support/harness.ts";
import { testEngine } from "./support/settings.ts";

const time = testClock();
let backend: Backend;
let pool: VerificationPool;
let app: HttpApp;
const readyWorkers: number[] = [];

beforeAll(async () => {
  backend = await startBackend("verifier_warming");
});

afterAll(async () => {
  await app?.close();
  await pool?.close();
  await backend?.close();
});

describe("a verifier starting with two verification workers", () => {
  it("answers /readyz and verifies a proof once its first worker can, while the other still loads", async () => {
    // As main.ts starts it: the pool, then the app, listening once the pool is ready.
    pool = createVerificationPool({
      size: 2,
      stateResolvers: latestStateResolvers(stable.network),
      localContextDirs: [FIXTURE_CONTEXTS_DIR],
      proofMaxAgeMs: ANY_PROOF_AGE_MS,
      engine: testEngine,
      onWorkerReady: (index) => readyWorkers.push(index),
    });
    app = await startApp(backend, { verifier: pool, clock: time.clock });
    await pool.ready();

    const readyz = await app.inject({ method: "GET", url: "/readyz" });
    const readyAtReadyz = [...readyWorkers];
    const now = time.now();
    await insertSession(backend.db, stable.sessionId, stable.request, now, new Date(now.getTime() + 60_000));
    const readyAtCallback = [...readyWorkers];
    const callback = await app.inject({
      method: "POST",
      url: `/api/callback?sessionId=${stable.sessionId}`,
      headers: { "content-type": "text/plain" },
      payload: stable.token,
    });

    expect(readyz.statusCode).toBe(200);
    expect(readyAtReadyz).toEqual([0]);
    expect(readyAtCallback).toEqual([0]);
    expect(callback.statusCode).toBe(200);
    const status = await app.inject({ method: "GET", url: `/api/status/${stable.sessionId}` });
    expect(status.json()).toMatchObject({ status: "success" });
    // The other finishes loading behind it.
    await eventually(() => readyWorkers.length === 2, 150_000);
    expect(readyWorkers).toEqual([0, 1]);
  }, 180_000);
});
