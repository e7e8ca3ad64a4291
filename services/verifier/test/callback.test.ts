import { Writable } from "node:stream";
import { assertValidEvent } from "@humanpass/event-bus";
import type { HttpApp } from "@humanpass/http";
import { createLogger } from "@humanpass/telemetry";
import { eventually } from "@humanpass/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertSession, purgeExpiredSessions } from "../src/db/sessions.ts";
import { TOKEN_NOT_VERIFIED } from "../src/routes/callback.ts";
import { createVerificationPool, type VerificationPool } from "../src/verification/verification-pool.ts";
import {
  ANY_PROOF_AGE_MS,
  beta1,
  FIXTURE_CONTEXTS_DIR,
  latestStateResolvers,
  stable,
  tokensWithInvalidAuthProof,
  tokenWithOneByteChanged,
} from "./support/fixtures.ts";
import { type Backend, startApp, startBackend, testClock, verifierEvents } from "./support/harness.ts";
import { testEngine } from "./support/settings.ts";

const TTL_MS = 15 * 60_000;
let backend: Backend;
let pool: VerificationPool;
let app: HttpApp;
const time = testClock();
const logLines: Array<Record<string, unknown>> = [];
const logger = createLogger({
  name: "verifier-test",
  level: "info",
  destination: new Writable({
    write(chunk, _encoding, done) {
      logLines.push(JSON.parse(String(chunk)));
      done();
    },
  }),
});

/** The service's log lines from now on. */
function captureLogs(): Array<Record<string, unknown>> {
  logLines.length = 0;
  return logLines;
}

beforeAll(async () => {
  backend = await startBackend("verifier_callback");
  // The production path: worker threads running the real fullVerify, state resolvers injected from here.
  pool = createVerificationPool({
    size: 1,
    stateResolvers: latestStateResolvers(stable.network, beta1.network),
    localContextDirs: [FIXTURE_CONTEXTS_DIR],
    proofMaxAgeMs: ANY_PROOF_AGE_MS,
    engine: testEngine,
  });
  await pool.ready();
  app = await startApp(backend, { verifier: pool, clock: time.clock, logger });
});

afterAll(async () => {
  await app?.close();
  await pool?.close();
  await backend?.close();
});

async function seed(sessionId: bigint, request = stable.request): Promise<void> {
  const now = time.now();
  await insertSession(backend.db, sessionId, request, now, new Date(now.getTime() + TTL_MS));
}

/** A valid token with one part broken in turn: wrong types, nulls, missing fields, missing segments. */
function variants(token: string): string[] {
  const [h, p, z] = token.split(".");
  const dec = (x: string) => JSON.parse(Buffer.from(x, "base64url").toString());
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const proof = dec(z);
  return [
    `${h}.${p}.${enc({})}`,
    `${h}.${p}.${enc({ proof: {}, pub_signals: proof.pub_signals })}`,
    `${h}.${p}.${enc({ proof: proof.proof })}`,
    `${h}.${p}.${enc({ ...proof, pub_signals: [] })}`,
    `${h}.${enc({})}.${z}`,
    `${h}.${enc({ body: {} })}.${z}`,
    `${enc({ ...dec(h), circuitId: "nope" })}.${p}.${z}`,
    `${enc({ alg: dec(h).alg })}.${p}.${z}`,
    `${h}.${p}`,
    `${h}..${z}`,
    `${enc(null)}.${p}.${z}`,
    `${enc({ ...dec(h), crit: "x" })}.${p}.${z}`,
    `${enc({ ...dec(h), crit: null })}.${p}.${z}`,
    `${enc({ ...dec(h), typ: 5 })}.${p}.${z}`,
    `${h}.${p}.${enc(null)}`,
    `${h}.${p}.${enc({ proof: null, pub_signals: proof.pub_signals })}`,
    `${h}.${p}.${enc({ proof: { ...proof.proof, pi_b: null }, pub_signals: proof.pub_signals })}`,
    `${h}.${p}.${enc({ proof: proof.proof, pub_signals: null })}`,
    `${h}.${p}.${enc({ proof: proof.proof, pub_signals: [null, null, null] })}`,
    `${h}.${enc(null)}.${z}`,
  ];
}

const callback = (sessionId: string, token: string) =>
  app.inject({
    method: "POST",
    url: `/api/callback?sessionId=${sessionId}`,
    headers: { "content-type": "text/plain" },
    payload: token,
  });
const status = async (id: string) => (await app.inject({ method: "GET", url: `/api/status/${id}` })).json();

describe("POST /api/callback with the public V3 test vectors", () => {
  it("verifies the token, records the nullifier, reports success and publishes uniqueness_verified", async () => {
    await seed(stable.sessionId);
    expect(await status("3")).toEqual({ requestId: "3", status: "pending" });

    // Wallets post the raw token; surrounding whitespace is not part of it.
    const response = await callback("3", `\n  ${stable.token}\n`);

    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.from).toBe(stable.userDid);
    expect(body.body.scope.map((s: { id: number }) => s.id)).toEqual([2, 3]);
    expect(await status("3")).toEqual({ requestId: "3", status: "success" });
    const rows = await backend.db.selectFrom("nullifiers").selectAll().execute();
    expect(rows).toEqual([
      expect.objectContaining({
        nullifier_session_id: "12345",
        nullifier: stable.nullifier,
        session_id: "3",
        user_did: stable.userDid,
      }),
    ]);
    const events = await eventually(async () => {
      const list = await verifierEvents(backend);
      return list.length > 0 && list;
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ source: "verifier", type: "uniqueness_verified", subject: "3" });
    expect(events[0].data).toEqual({
      sessionId: 3,
      nullifier: stable.nullifier,
      nullifierSessionId: "12345",
      userDid: stable.userDid,
      userId: "21575127216236248869702276246037557119007466180301957762196593786733007617",
      verifiedAt: time.now().toISOString(),
    });
    // Consumers validate against the same catalog schema.
    expect(() => assertValidEvent("VERIFIER", events[0])).not.toThrow();
  });

  it("answers 'already verified' when the same person verifies again in a later session", async () => {
    // The first session expires and is purged; the nullifier stays. The token answers scope id 3, so the
    // second session reuses that id.
    time.advance(TTL_MS + 61 * 60_000);
    expect(await purgeExpiredSessions(backend.db, time.now(), 60 * 60_000)).toBeGreaterThanOrEqual(1);
    expect(await status("3")).toEqual({ requestId: "3", status: "not_found" });
    await seed(stable.sessionId);

    const response = await callback("3", stable.token);

    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ message: "This person has already verified." });
    expect(await status("3")).toEqual({ requestId: "3", status: "pending" });
    expect(await backend.db.selectFrom("nullifiers").select("nullifier").execute()).toHaveLength(1);
  });

  it("answers the verification error only to the callbacks with an invalid proof among concurrent ones", async () => {
    const invalid = tokensWithInvalidAuthProof();
    const tokens = [...invalid.flatMap(({ token }) => [stable.token, token]), stable.token];
    const responses = await Promise.all(tokens.map((token) => callback("3", token)));
    responses.forEach((response, i) => {
      const bad = invalid.find(({ token }) => token === tokens[i]);
      if (bad) {
        expect(response.statusCode, bad.kind).toBe(500);
        expect(Object.keys(response.json())).toEqual(["error"]);
      } else {
        // Verified; the person's nullifier is already recorded (step 6).
        expect(response.json()).toEqual({ message: "This person has already verified." });
      }
    });
  });

  it("accepts another member of the V3 family (beta.1) for another person", async () => {
    await seed(beta1.sessionId, beta1.request);
    const response = await callback("2", beta1.token);
    expect(response.statusCode).toBe(200);
    expect(await status("2")).toEqual({ requestId: "2", status: "success" });
    const nullifiers = await backend.db
      .selectFrom("nullifiers")
      .select("nullifier")
      .orderBy("nullifier")
      .execute();
    expect(nullifiers.map((n) => n.nullifier)).toEqual([stable.nullifier, beta1.nullifier].sort());
  });

  it("answers 500 for a token with one byte changed, and logs the verification error", async () => {
    await seed(77n);
    const lines = captureLogs();
    const response = await callback("77", tokenWithOneByteChanged(stable.token));
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual(TOKEN_NOT_VERIFIED);
    // The changed digit moves the auth proof's pi_a off the curve; each verifier says so in its words.
    expect(lines.find((l) => l.msg === "callback token rejected")).toMatchObject({
      sessionId: "77",
      reason:
        testEngine === "library"
          ? "bad point: equation left != right"
          : "invalid pi_a: point is not on the curve",
    });
    expect(await status("77")).toEqual({ requestId: "77", status: "pending" });
  });

  it("answers 'No valid nullifier proof' when the stored request's scope id is not the session id", async () => {
    // Session 4 holds the fixture request whose V3 entry has id 3: the token verifies against it, but no V3
    // entry answers session 4.
    await seed(4n);
    const response = await callback("4", stable.token);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ message: "No valid nullifier proof found in response." });
    expect(await status("4")).toEqual({ requestId: "4", status: "pending" });
  });

  it("answers 500 when verification fails against the stored request (another nullifierSessionId)", async () => {
    const request = structuredClone(stable.request);
    request.body.scope[1].params = { nullifierSessionId: "999" };
    await seed(78n, request);
    const lines = captureLogs();
    const response = await callback("78", stable.token);
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual(TOKEN_NOT_VERIFIED);
    expect(lines.find((l) => l.msg === "callback token rejected")?.reason).toMatch(/nullification/);
  });

  it("rejects unknown, malformed and missing session ids with the spec's body", async () => {
    for (const url of [
      "/api/callback?sessionId=123456",
      "/api/callback?sessionId=abc",
      "/api/callback?sessionId=-1",
      "/api/callback",
      "/api/callback?sessionId=99999999999999999999999",
    ]) {
      const response = await app.inject({
        method: "POST",
        url,
        payload: stable.token,
        headers: { "content-type": "text/plain" },
      });
      expect(response.statusCode, url).toBe(400);
      expect(response.json(), url).toEqual({ error: "Invalid or expired sessionId" });
    }
  });

  it("treats an expired session as unknown to the callback and reports it as expired", async () => {
    await seed(79n);
    time.advance(TTL_MS);
    expect(await status("79")).toEqual({ requestId: "79", status: "expired" });
    const response = await callback("79", stable.token);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: "Invalid or expired sessionId" });
  });

  it("takes the token whatever content type the wallet sends", async () => {
    await seed(80n);
    const response = await app.inject({
      method: "POST",
      url: "/api/callback?sessionId=80",
      headers: { "content-type": "application/json" },
      payload: "not-a-jwz-token",
    });
    expect(response.statusCode).toBe(500);
    expect(Object.keys(response.json())).toEqual(["error"]);
  });

  it("answers every token it cannot verify with one fixed 500 message, the library's words in the log only", async () => {
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const hostile = "\u001b[31mEVIL<script>";
    const tokens = [
      "not-a-jwz-token",
      `${hostile}.${hostile}.${hostile}`,
      `${b64({ alg: hostile, circuitId: "authV3", crit: ["circuitId"], typ: "application/iden3-zkp-json" })}.${b64({})}.${b64({})}`,
      `${b64({ alg: "groth16", circuitId: hostile, crit: ["circuitId"], typ: "application/iden3-zkp-json" })}.${b64({})}.${b64({})}`,
      `${b64({ alg: "groth16", circuitId: "authV3", crit: ["circuitId"], typ: hostile })}.${b64(hostile)}.${b64({ proof: hostile })}`,
      tokenWithOneByteChanged(stable.token),
    ];
    const lines = captureLogs();
    for (const [i, token] of tokens.entries()) {
      const sessionId = 130n + BigInt(i);
      await seed(sessionId);
      const response = await callback(String(sessionId), token);
      expect({ token, status: response.statusCode, body: response.json() }).toEqual({
        token,
        status: 500,
        body: TOKEN_NOT_VERIFIED,
      });
    }
    const rejected = lines.filter((l) => l.msg === "callback token rejected");
    expect(rejected).toHaveLength(tokens.length);
    expect(rejected.every((l) => typeof l.reason === "string" && l.reason !== "")).toBe(true);
  });

  it("answers malformed tokens with spec 1's 500 and a fixed message, never the library's text", async () => {
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const malformed = [
      "a.b.c",
      `${b64({})}.${b64({})}.${b64({})}`,
      `${b64({ alg: "groth16", circuitId: "authV3" })}.${b64("x")}.${b64({ proof: null })}`,
      `${b64({ alg: "groth16", circuitId: "authV3", crit: ["circuitId"], typ: "application/iden3-zkp-json" })}.${b64({})}.${b64({})}`,
      b64([1, 2, 3]),
      ...variants(stable.token),
    ];
    for (const [i, token] of malformed.entries()) {
      const sessionId = 90n + BigInt(i);
      await seed(sessionId);
      const response = await callback(String(sessionId), token);
      expect(response.statusCode, token).toBe(500);
      expect(response.json(), token).toEqual(TOKEN_NOT_VERIFIED);
    }
  });
});
