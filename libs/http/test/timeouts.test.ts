import net from "node:net";
import { createDb, sql } from "@humanpass/db";
import { createTestDatabase, TcpProxy, type TestDatabase, testDatabaseUrl } from "@humanpass/testing";
import type { Kysely } from "kysely";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpApp, type HttpApp } from "../src/index.ts";

const lines: Array<{ level: number; msg: string }> = [];
const logger = pino({ level: "info" }, {
  write: (line: string) => void lines.push(JSON.parse(line)),
} as unknown as pino.DestinationStream);
let database: TestDatabase;
let proxy: TcpProxy;
let db: Kysely<any>;
let app: HttpApp;
let port: number;

beforeAll(async () => {
  database = await createTestDatabase("http_timeouts");
  proxy = await TcpProxy.forUrl(testDatabaseUrl()).start();
  db = createDb({
    connectionString: proxy.url(database.url),
    schema: "public",
    max: 2,
    queryTimeoutMs: 1_000,
  });
  app = await createHttpApp({
    logger,
    rateLimit: false,
    timeouts: { requestMs: 500, connectionMs: 4_000, handlerMs: 2_500 },
  });
  app.get("/rows", async () => (await sql<{ n: number }>`select 1 as n`.execute(db)).rows);
  app.get("/slow", async () => {
    await new Promise((r) => setTimeout(r, 5_000));
    return "late";
  });
  app.post("/echo", async (req) => req.body);
  await app.listen({ port: 0, host: "127.0.0.1" });
  port = (app.server.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await app.close();
  await db.destroy();
  await proxy.stop();
  await database.drop();
});

/** Sends `raw` and returns what the server wrote before it closed, and how long that took. */
function exchange(raw: string, giveUpMs = 10_000): Promise<{ text: string; ms: number; closed: boolean }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1", () => socket.write(raw));
    let text = "";
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, ms: Date.now() - started, closed });
    };
    const timer = setTimeout(() => done(false), giveUpMs);
    socket.on("data", (d) => {
      text += d;
    });
    socket.on("close", () => done(true));
    socket.on("error", () => done(true));
  });
}

describe("bounded waits", () => {
  it("answers a half-sent body with 408 once the request timeout passes", async () => {
    const res = await exchange(
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":',
    );
    expect(res.closed).toBe(true);
    expect(res.text).toMatch(/^HTTP\/1\.1 408/);
    expect(res.text).toContain('"error":"request_timeout"');
    expect(res.ms).toBeLessThan(5_000);
  });

  it("answers headers that do not arrive within the request timeout with 408 `request_timeout`", async () => {
    const res = await exchange("GET /rows HTTP/1.1\r\nHost: x\r\n");
    expect(res.closed).toBe(true);
    expect(res.text).toMatch(/^HTTP\/1\.1 408/);
    expect(res.text.slice(res.text.indexOf("\r\n\r\n") + 4)).toBe(
      JSON.stringify({ error: "request_timeout", message: "The request was not received in time" }),
    );
  });

  it("answers headers too large and a request that is not HTTP with a machine-readable code", async () => {
    const large = await exchange(`GET /rows HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    expect(large.text).toMatch(/^HTTP\/1\.1 431/);
    expect(large.text).toContain('"error":"headers_too_large"');
    const garbage = await exchange("HELLO\r\n\r\n");
    expect(garbage.text).toMatch(/^HTTP\/1\.1 400/);
    expect(garbage.text).toContain('"error":"invalid_request"');
  });

  it("closes a connection that never sends a request", async () => {
    const res = await exchange("");
    expect(res.closed).toBe(true);
    expect(res.ms).toBeLessThan(5_000);
  });

  it("answers 503 `timeout` to a handler that does not finish in time", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/slow`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: "timeout", message: "The request took too long; retry later" });
  });

  it("answers 503 `database_unavailable` and logs it while Postgres is cut off or stalled", async () => {
    expect((await fetch(`http://127.0.0.1:${port}/rows`)).status).toBe(200);
    lines.length = 0;
    proxy.stall();
    const stalled = await fetch(`http://127.0.0.1:${port}/rows`);
    expect(stalled.status).toBe(503);
    expect(stalled.headers.get("retry-after")).toBe("5");
    expect(await stalled.json()).toEqual({
      error: "database_unavailable",
      message: "The database is not answering; retry later",
    });
    proxy.cut();
    const cut = await fetch(`http://127.0.0.1:${port}/rows`);
    expect(cut.status).toBe(503);
    expect(await cut.json()).toMatchObject({ error: "database_unavailable" });
    expect(lines.filter((l) => l.msg === "database unavailable" && l.level === 50)).toHaveLength(2);
    proxy.restore();
  });
});
