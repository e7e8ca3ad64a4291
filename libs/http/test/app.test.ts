import { createDb, pingDb } from "@humanpass/db";
import { connectNats, pingNats } from "@humanpass/event-bus";
import {
  createTestDatabase,
  eventually,
  TcpProxy,
  type TestDatabase,
  testDatabaseUrl,
  testNatsUrl,
} from "@humanpass/testing";
import type { NatsConnection } from "@nats-io/transport-node";
import { Type } from "@sinclair/typebox";
import type { Kysely } from "kysely";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpApp, type HttpApp, HttpError, optionalCheck } from "../src/index.ts";

const logger = pino({ level: "silent" });
let database: TestDatabase;
let pgProxy: TcpProxy;
let natsProxy: TcpProxy;
let db: Kysely<any>;
let nats: NatsConnection;
let app: HttpApp;

beforeAll(async () => {
  database = await createTestDatabase("http_base");
  pgProxy = await TcpProxy.forUrl(testDatabaseUrl()).start();
  natsProxy = await TcpProxy.forUrl(testNatsUrl()).start();
  db = createDb({ connectionString: pgProxy.url(database.url), schema: "public", max: 2 });
  nats = await connectNats(natsProxy.url(testNatsUrl()), logger);
  app = await createHttpApp({
    logger,
    readiness: { postgres: () => pingDb(db), nats: () => pingNats(nats) },
    readinessTimeoutMs: 500,
    // Every request counts, unknown paths and /docs too; other tests here call from 127.0.0.1, and stay under it.
    rateLimit: { max: 30, timeWindowMs: 60_000, exempt: ["/open"] },
    corsOrigins: ["https://app.example"],
    openapi: { title: "test" },
  });
  app.post(
    "/items",
    { schema: { body: Type.Object({ name: Type.String({ minLength: 1 }), count: Type.Integer() }) } },
    async (req) => ({ created: req.body.name }),
  );
  app.get("/boom", async () => {
    throw new Error("secret internals at /srv/app.ts:42");
  });
  app.get("/teapot", async () => {
    throw new HttpError(409, "already_done", "this was done before");
  });
  app.get("/open", async () => "open");
  app.get<{ Params: { id: string } }>("/things/:id", async (req) => ({ length: req.params.id.length }));
  app.get("/limited", async () => "ok");
  await app.ready();
});

afterAll(async () => {
  await app.close();
  await nats.close();
  await db.destroy();
  await pgProxy.stop();
  await natsProxy.stop();
  await database.drop();
});

describe("HTTP base", () => {
  it("answers /healthz and /readyz while Postgres and NATS answer", async () => {
    expect((await app.inject("/healthz")).json()).toEqual({ status: "ok" });
    const ready = await app.inject("/readyz");
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: "ready", checks: { postgres: "ok", nats: "ok" } });
  });

  it("turns /readyz to 503 when Postgres is unreachable and back to 200 when it returns", async () => {
    pgProxy.cut();
    const down = await app.inject("/readyz");
    expect(down.statusCode).toBe(503);
    // The reason goes to the log; whoever can reach /readyz learns nothing about the network inside.
    expect(down.json()).toEqual({ status: "unavailable", checks: { postgres: "unavailable", nats: "ok" } });
    pgProxy.restore();
    await eventually(async () => (await app.inject("/readyz")).statusCode === 200);
  });

  it("turns /readyz to 503 when NATS is unreachable and back to 200 when it returns", async () => {
    natsProxy.cut();
    const down = await app.inject("/readyz");
    expect(down.statusCode).toBe(503);
    expect(down.json().checks.nats).toBe("unavailable");
    natsProxy.restore();
    await eventually(async () => (await app.inject("/readyz")).statusCode === 200, 15_000, 200);
  });

  it("stays ready without an optional dependency, and says it is unavailable", async () => {
    const optional = await createHttpApp({
      logger,
      readiness: { postgres: () => pingDb(db), nats: optionalCheck(() => pingNats(nats)) },
      readinessTimeoutMs: 500,
    });
    try {
      natsProxy.cut();
      const res = await optional.inject("/readyz");
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: "ready", checks: { postgres: "ok", nats: "unavailable" } });
    } finally {
      natsProxy.restore();
      await optional.close();
    }
  });

  it("answers a bad body with 400 and a code", async () => {
    const res = await app.inject({ method: "POST", url: "/items", payload: { name: "", count: "many" } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: "invalid_request", message: expect.stringContaining("body") });
    const notJson = await app.inject({
      method: "POST",
      url: "/items",
      payload: "{oops",
      headers: { "content-type": "application/json" },
    });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().error).toBe("invalid_request");
  });

  it("answers a thrown error with a 500 that has no internals", async () => {
    const res = await app.inject("/boom");
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: "internal_error", message: "Internal server error" });
    expect(res.body).not.toMatch(/secret|stack|\.ts/);
  });

  it("passes an HttpError's status and code through", async () => {
    const res = await app.inject("/teapot");
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: "already_done", message: "this was done before" });
  });

  it("takes path segments as long as a DID with room to spare", async () => {
    const did = `did:iden3:billions:main:${"2VmAkXrihYaL".repeat(20)}`;
    const res = await app.inject(`/things/${did}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ length: did.length });
  });

  it("answers an unknown path with a JSON 404", async () => {
    const res = await app.inject("/nowhere?x=1");
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: "not_found", message: "Route GET /nowhere not found" });
  });

  it("limits the rate per client with 429 and Retry-After, exempting health and listed routes", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 32; i++)
      statuses.push((await app.inject({ url: "/limited", remoteAddress: "10.9.9.9" })).statusCode);
    expect(statuses.filter((s) => s === 429).length).toBe(2);
    const limited = await app.inject({ url: "/limited", remoteAddress: "10.9.9.9" });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["retry-after"]).toBeDefined();
    expect(limited.json().error).toBe("rate_limited");
    expect((await app.inject({ url: "/limited", remoteAddress: "10.9.9.8" })).statusCode).toBe(200);
    for (let i = 0; i < 10; i++)
      expect((await app.inject({ url: "/open", remoteAddress: "10.9.9.9" })).statusCode).toBe(200);
    expect((await app.inject({ url: "/healthz", remoteAddress: "10.9.9.9" })).statusCode).toBe(200);
  });

  it("sends CORS headers only to configured origins and serves OpenAPI", async () => {
    const ok = await app.inject({ url: "/open", headers: { origin: "https://app.example" } });
    expect(ok.headers["access-control-allow-origin"]).toBe("https://app.example");
    const other = await app.inject({ url: "/open", headers: { origin: "https://evil.example" } });
    expect(other.headers["access-control-allow-origin"]).toBeUndefined();
    const spec = await app.inject("/docs/json");
    expect(spec.json().paths["/items"]).toBeDefined();
  });
});
