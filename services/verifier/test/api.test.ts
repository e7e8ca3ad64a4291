import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertSession, MAX_SESSION_ID, purgeExpiredSessions, sessionStatus } from "../src/db/sessions.ts";
import type { TokenVerifier } from "../src/verification/token-verifier.ts";
import { stable } from "./support/fixtures.ts";
import { type Backend, startApp, startBackend, testClock, testSettings } from "./support/harness.ts";

const unusedVerifier: TokenVerifier = {
  verify: () => Promise.reject(new Error("verification is not part of these tests")),
};
let backend: Backend;

beforeAll(async () => {
  backend = await startBackend("verifier_api");
});

afterAll(async () => {
  await backend?.close();
});

describe("GET /api/verification-request", () => {
  it("stores a pending session and returns its authorization request", async () => {
    const app = await startApp(backend, { verifier: unusedVerifier });
    const response = await app.inject({ method: "GET", url: "/api/verification-request" });
    expect(response.statusCode).toBe(200);
    const request = response.json();
    const [proofRequest] = request.body.scope;
    const sessionId: number = proofRequest.id;
    expect(Number.isInteger(sessionId) && sessionId >= 1 && sessionId <= MAX_SESSION_ID).toBe(true);
    expect(request.expires_time).toBe(request.created_time + testSettings.sessionTtlMs / 1000);
    expect(request).toMatchObject({
      from: testSettings.audienceDid,
      type: "https://iden3-communication.io/authorization/1.0/request",
      typ: "application/iden3comm-plain-json",
      body: {
        reason: "Proof of Uniqueness",
        callbackUrl: `https://verifier.example.test/api/callback?sessionId=${sessionId}`,
      },
    });
    expect(request.body.scope).toEqual([
      {
        id: sessionId,
        circuitId: "credentialAtomicQueryV3",
        params: { nullifierSessionId: 12345 },
        query: {
          allowedIssuers: testSettings.allowedIssuers,
          context: testSettings.schemaContext,
          type: "UniquenessCredential",
        },
      },
    ]);
    expect((await app.inject({ method: "GET", url: `/api/status/${sessionId}` })).json()).toEqual({
      requestId: String(sessionId),
      status: "pending",
    });
    const stored = await backend.db
      .selectFrom("sessions")
      .select("request")
      .where("session_id", "=", String(sessionId))
      .executeTakeFirstOrThrow();
    expect(stored.request).toEqual(request);
    await app.close();
  });

  it("draws a new id on every request and again when the drawn id is taken", async () => {
    const drawn = [501, 501, 502];
    const app = await startApp(backend, {
      verifier: unusedVerifier,
      drawSessionId: () => drawn.shift() as number,
    });
    const first = (await app.inject({ method: "GET", url: "/api/verification-request" })).json();
    const second = (await app.inject({ method: "GET", url: "/api/verification-request" })).json();
    expect([first.body.scope[0].id, second.body.scope[0].id]).toEqual([501, 502]);
    expect(second.body.callbackUrl).toBe("https://verifier.example.test/api/callback?sessionId=502");
    await app.close();
  });

  it("expires sessions after the TTL and purges them after the retention", async () => {
    const time = testClock();
    const app = await startApp(backend, {
      verifier: unusedVerifier,
      clock: time.clock,
      drawSessionId: () => 601,
    });
    await app.inject({ method: "GET", url: "/api/verification-request" });
    time.advance(testSettings.sessionTtlMs - 1);
    expect(await sessionStatus(backend.db, 601n, time.now())).toBe("pending");
    time.advance(1);
    expect((await app.inject({ method: "GET", url: "/api/status/601" })).json()).toEqual({
      requestId: "601",
      status: "expired",
    });
    const callback = await app.inject({
      method: "POST",
      url: "/api/callback?sessionId=601",
      payload: stable.token,
    });
    expect(callback.statusCode).toBe(400);
    expect(callback.json()).toEqual({ error: "Invalid or expired sessionId" });
    expect(await purgeExpiredSessions(backend.db, time.now(), testSettings.sessionRetentionMs)).toBe(0);
    time.advance(testSettings.sessionRetentionMs + 1);
    expect(
      await purgeExpiredSessions(backend.db, time.now(), testSettings.sessionRetentionMs),
    ).toBeGreaterThanOrEqual(1);
    expect((await app.inject({ method: "GET", url: "/api/status/601" })).json()).toEqual({
      requestId: "601",
      status: "not_found",
    });
    await app.close();
  });
});

describe("GET /api/status/{id}", () => {
  it("reports not_found for unknown ids and echoes the id as received", async () => {
    const app = await startApp(backend, { verifier: unusedVerifier });
    for (const id of ["424242", "0042", "99999999999999999999999999"]) {
      const response = await app.inject({ method: "GET", url: `/api/status/${id}` });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ requestId: id, status: "not_found" });
    }
    await app.close();
  });

  it("answers 400, not 500, for ids that are not integers", async () => {
    const app = await startApp(backend, { verifier: unusedVerifier });
    for (const id of ["abc", "1.5", "-3", "1e3", "%20"]) {
      const response = await app.inject({ method: "GET", url: `/api/status/${id}` });
      expect(response.statusCode, id).toBe(400);
      expect(response.json().error, id).toBe("invalid_request");
    }
    await app.close();
  });

  it("reports success for a verified session even after its TTL", async () => {
    const time = testClock();
    const app = await startApp(backend, { verifier: unusedVerifier, clock: time.clock });
    await insertSession(backend.db, 701n, stable.request, time.now(), new Date(time.now().getTime() + 1000));
    await backend.db
      .updateTable("sessions")
      .set({ status: "success" })
      .where("session_id", "=", "701")
      .execute();
    time.advance(5000);
    expect((await app.inject({ method: "GET", url: "/api/status/701" })).json()).toEqual({
      requestId: "701",
      status: "success",
    });
    await app.close();
  });
});

describe("HTTP policy", () => {
  it("limits each client to the configured number of requests per window", async () => {
    const app = await startApp(backend, {
      verifier: unusedVerifier,
      rateLimit: { max: 3, timeWindowMs: 60_000 },
    });
    const codes: number[] = [];
    for (let i = 0; i < 4; i++)
      codes.push((await app.inject({ method: "GET", url: "/api/status/1" })).statusCode);
    expect(codes).toEqual([200, 200, 200, 429]);
    expect((await app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
    await app.close();
  });

  it("allows cross-origin calls only from configured origins", async () => {
    const app = await startApp(backend, {
      verifier: unusedVerifier,
      corsOrigins: ["https://app.example.test"],
    });
    const allowed = await app.inject({
      method: "GET",
      url: "/api/status/1",
      headers: { origin: "https://app.example.test" },
    });
    const other = await app.inject({
      method: "GET",
      url: "/api/status/1",
      headers: { origin: "https://evil.example.test" },
    });
    expect(allowed.headers["access-control-allow-origin"]).toBe("https://app.example.test");
    expect(other.headers["access-control-allow-origin"]).toBeUndefined();
    await app.close();
    const closed = await startApp(backend, { verifier: unusedVerifier });
    const none = await closed.inject({
      method: "GET",
      url: "/api/status/1",
      headers: { origin: "https://app.example.test" },
    });
    expect(none.headers["access-control-allow-origin"]).toBeUndefined();
    await closed.close();
  });

  it("serves the demo page and QR codes of bounded size", async () => {
    const app = await startApp(backend, { verifier: unusedVerifier });
    const page = await app.inject({ method: "GET", url: "/" });
    expect(page.headers["content-type"]).toMatch(/text\/html/);
    expect(page.body).toContain('id="verify"');
    const qr = await app.inject({
      method: "GET",
      url: `/demo/qr.svg?data=${encodeURIComponent("https://wallet.example.test/#i_m=e30=")}`,
    });
    expect(qr.statusCode).toBe(200);
    expect(qr.headers["content-type"]).toMatch(/image\/svg\+xml/);
    expect(qr.body).toMatch(/^<svg/);
    const tooLong = await app.inject({ method: "GET", url: `/demo/qr.svg?data=${"x".repeat(5000)}` });
    expect(tooLong.statusCode).toBe(400);
    await app.close();
  });
});
