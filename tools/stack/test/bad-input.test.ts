/**
 * A hostile client's run over every endpoint of the five services, as `make up` starts them: malformed paths,
 * queries, bodies and headers never get a 5xx (but the verifier callback's 500, which spec 1 prescribes), and no
 * request is held past its timeout. Then the services lose Postgres (503 `database_unavailable`) and NATS (still
 * ready), both cut through TCP proxies this test controls.
 */
import net from "node:net";
import { networkInterfaces } from "node:os";
import {
  connectTestNats,
  createTestDatabase,
  deleteTestStreams,
  TcpProxy,
  type TestDatabase,
  testNatsUrl,
} from "@humanpass/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomPrefix, SERVICE_NAMES, type ServiceName, type Stack, startStack } from "../src/stack.ts";

const REQUEST_TIMEOUT_MS = 2_000;
const HANDLER_TIMEOUT_MS = 8_000;
/** A request not answered by then was held past its timeout. */
const HELD_MS = HANDLER_TIMEOUT_MS + 4_000;

let database: TestDatabase;
let pgProxy: TcpProxy;
let natsProxy: TcpProxy;
let stack: Stack;
const prefix = randomPrefix();
const logs: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase("bad_input");
  pgProxy = await TcpProxy.forUrl(database.url).start();
  natsProxy = await TcpProxy.forUrl(testNatsUrl()).start();
  const common = {
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    HTTP_HANDLER_TIMEOUT_MS: String(HANDLER_TIMEOUT_MS),
    HTTP_CONNECTION_TIMEOUT_MS: String(HANDLER_TIMEOUT_MS + 2_000),
    DB_QUERY_TIMEOUT_MS: "3000",
    // This test's own requests stand for the proxy's.
    TRUST_PROXY: "127.0.0.1,::1",
    RATE_LIMIT_MAX: "20",
  };
  stack = await startStack({
    databaseUrl: pgProxy.url(database.url),
    natsUrl: natsProxy.url(testNatsUrl()),
    prefix,
    log: (service, line) => logs.push(`${service} | ${line}`),
    // info: the `routes served` line of each service lists what this test probes.
    logLevel: "info",
    env: Object.fromEntries(SERVICE_NAMES.map((n) => [n, common])),
  });
}, 240_000);

afterAll(async () => {
  pgProxy?.restore();
  natsProxy?.restore();
  await stack?.stop();
  await pgProxy?.stop();
  await natsProxy?.stop();
  await database?.drop();
  // The stack's streams reserve their size limits (over 4 GB) on the NATS server until deleted.
  const nc = await connectTestNats();
  await deleteTestStreams(nc, { prefix });
  await nc.close();
}, 60_000);

/** An entry of a service's `routes served` log line (libs/http). */
interface ServedRoute {
  method: string;
  url: string;
  query: string[];
}

interface Endpoint {
  method: string;
  path: string;
  params: string[];
  query: string[];
  hasBody: boolean;
}

/**
 * Every route the service's app registered, as its `routes served` log line lists them (hidden ones included), so
 * a route added later is probed without this test knowing of it.
 */
function endpointsOf(service: ServiceName): Endpoint[] {
  const line = logs
    .filter((l) => l.startsWith(`${service} | {`))
    .map((l) => JSON.parse(l.slice(l.indexOf("{"))) as { msg?: string; routes?: ServedRoute[] })
    .find((l) => l.msg === "routes served");
  if (!line?.routes) throw new Error(`${service} did not log the routes it serves`);
  return line.routes
    .filter((r) => ["GET", "POST", "PUT", "PATCH", "DELETE"].includes(r.method))
    .map((r) => ({
      method: r.method,
      path: r.url,
      params: [...r.url.matchAll(/:([A-Za-z0-9_]+)|\*/g)].map((m) => m[0]),
      query: r.query,
      hasBody: !["GET", "DELETE"].includes(r.method),
    }));
}

const BAD_VALUES = [
  "",
  "x",
  "0x10",
  "-1",
  "1e309",
  "9".repeat(120),
  "%00",
  "%ZZ",
  "' or 1=1 --",
  "..%2F..%2Fetc%2Fpasswd",
  "did:iden3:",
  `did:${"a".repeat(900)}`,
  "[]",
  "%F0%9F%92%A9",
  // Control bytes, overlong and lone UTF-8, a wrong type where an integer or address goes.
  "%1B%5B31m%07%0D",
  "%C0%AF",
  "%FF%FE",
  "true",
  "%7B%22a%22%3A1%7D",
];

const BAD_BODIES: Array<{ type: string; body: string | Buffer }> = [
  { type: "application/json", body: "{" },
  { type: "application/json", body: "null" },
  { type: "application/json", body: "[]" },
  { type: "application/json", body: '"text"' },
  { type: "application/json", body: "{}" },
  { type: "application/json", body: `{"a":1e309,"b":"${"x".repeat(10_000)}","c":[null,{}]}` },
  { type: "application/json", body: `${"[".repeat(5_000)}${"]".repeat(5_000)}` },
  { type: "application/json", body: "x".repeat(2_000_000) },
  { type: "text/plain", body: "hello" },
  { type: "application/x-www-form-urlencoded", body: "a=1&b=2" },
  // Wrong types for every field the services read, and unknown ones.
  { type: "application/json", body: '{"nonce":1,"signature":[],"sessionId":{},"address":true,"extra":"x"}' },
  { type: "application/json", body: '{"nonce":"\\u001b[31m","signature":"\\u0000"}' },
  // Control bytes raw inside a JSON string (not valid JSON), and bytes that are not UTF-8.
  { type: "application/json", body: '{"nonce":"\u001b[31m\u0007"}' },
  { type: "application/json; charset=utf-8", body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
  { type: "application/json; charset=utf-16", body: "{}" },
  { type: "application/octet-stream", body: Buffer.alloc(300_000, 0x1b) },
];

const BAD_HEADERS: Record<string, string>[] = [
  { "payment-signature": "not base64 !!" },
  { "x-payment": Buffer.from('{"x402Version":2,"payload":{}}').toString("base64") },
  { "human-proof": "{" },
  {
    "human-proof": JSON.stringify({
      nonce: "n",
      address: "0x0",
      signature: "0x",
      chainId: "x",
      type: "eip191",
    }),
  },
  { "payment-signature": Buffer.from(JSON.stringify({ x402Version: 2, accepted: null })).toString("base64") },
  // Terminal escape codes that x402 quotes when it cannot decode the header.
  { "payment-signature": Buffer.from('{"x402Version":2,\u001b[2J\u001b[31m').toString("base64") },
  {
    "human-proof": JSON.stringify({
      nonce: "\u001b[31m",
      address: 1,
      signature: [],
      chainId: {},
      type: null,
    }),
  },
  { "x-forwarded-for": "not-an-ip-79" },
];

let client = 0;
/** Every request from a client address of its own, which only TRUST_PROXY makes the services see. */
function nextClient(): string {
  client++;
  return `10.${(client >> 16) & 255}.${(client >> 8) & 255}.${client & 255}`;
}

/** Whether the text holds a character that acts on a terminal: C0 controls but line feed and tab, DEL, C1. */
function hasTerminalControl(text: string): boolean {
  return [...text].some((c) => {
    const code = c.charCodeAt(0);
    return (code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f);
  });
}

interface Outcome {
  service: ServiceName;
  request: string;
  status: number | "held";
  body: string;
  paymentRequired?: boolean;
}

async function send(
  service: ServiceName,
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Outcome> {
  const request = `${method} ${path}${init.body !== undefined ? ` (${String(init.body).slice(0, 40)})` : ""} ${JSON.stringify(init.headers ?? {}).slice(0, 80)}`;
  try {
    const response = await fetch(`${stack.urls[service]}${path}`, {
      method,
      headers: { "x-forwarded-for": nextClient(), ...init.headers },
      body: init.body,
      // The service's own answer, a redirect included: swagger-ui's /docs/static/index.html redirects to itself when
      // a query is present, and following that to fetch's limit of 20 hops outlasts HELD_MS on a loaded machine.
      redirect: "manual",
      signal: AbortSignal.timeout(HELD_MS),
    });
    return {
      service,
      request,
      status: response.status,
      body: await response.text(),
      paymentRequired: response.headers.has("payment-required"),
    };
  } catch (e) {
    if ((e as Error).name === "TimeoutError") return { service, request, status: "held", body: "" };
    throw e;
  }
}

function fill(path: string, params: string[], value: string): string {
  let out = path;
  for (const p of params) out = out.replace(p, value);
  return out;
}

/** Spec 1: the verifier's callback answers 500 `{ error }` when token verification fails, with one fixed message. */
function prescribed(o: Outcome): boolean {
  return (
    o.service === "verifier" &&
    o.request.startsWith("POST /api/callback") &&
    o.status === 500 &&
    o.body === JSON.stringify({ error: "The token could not be verified" })
  );
}

/** Spec 1's verbatim 4xx bodies for the callback, whose text is the contract. */
const SPEC_1_BODIES = new Set([
  JSON.stringify({ error: "Invalid or expired sessionId" }),
  JSON.stringify({ message: "No valid nullifier proof found in response." }),
]);

/**
 * A 4xx a program can act on: `{ error: <code> }`, spec 1's verbatim callback bodies, or x402's 402 whose
 * machine-readable terms are the PAYMENT-REQUIRED header.
 */
function machineReadable(o: Outcome): boolean {
  if (o.service === "verifier" && SPEC_1_BODIES.has(o.body)) return true;
  if (o.status === 402 && o.paymentRequired) return true;
  try {
    const error = (JSON.parse(o.body) as { error?: unknown }).error;
    return typeof error === "string" && /^[a-z][a-z0-9_]*$/.test(error);
  } catch {
    return false;
  }
}

describe("bad input over every endpoint", () => {
  it("never answers 5xx (but where a spec says so) and never holds a request past its timeout", async () => {
    const outcomes: Outcome[] = [];
    let endpoints = 0;
    for (const service of SERVICE_NAMES) {
      for (const e of endpointsOf(service)) {
        endpoints++;
        const jobs: Array<Promise<Outcome>> = [];
        for (const value of BAD_VALUES) {
          const encoded = /%|\.\./.test(value) ? value : encodeURIComponent(value);
          if (e.params.length > 0) jobs.push(send(service, e.method, fill(e.path, e.params, encoded)));
          const path = fill(e.path, e.params, e.params.length ? "1" : "");
          for (const q of e.query.length ? e.query : ["unexpected"])
            jobs.push(send(service, e.method, `${path}?${q}=${encoded}&sessionId=${encoded}`));
        }
        const path = fill(e.path, e.params, "1");
        if (e.hasBody) {
          for (const { type, body } of BAD_BODIES)
            jobs.push(send(service, e.method, path, { headers: { "content-type": type }, body }));
        }
        for (const headers of BAD_HEADERS) jobs.push(send(service, e.method, path, { headers }));
        outcomes.push(...(await Promise.all(jobs)));
      }
    }
    expect(endpoints).toBeGreaterThan(20);
    expect(outcomes.length).toBeGreaterThan(1_000);
    const bad = outcomes.filter((o) => o.status === "held" || (o.status >= 500 && !prescribed(o)));
    expect(bad).toEqual([]);
    const unreadable = outcomes.filter((o) => o.status !== "held" && o.status >= 400 && !machineReadable(o));
    expect(unreadable).toEqual([]);
    // x402's warning about a bad PAYMENT-SIGNATURE, routed through the logger: the answer can arrive before the
    // line has crossed the child's stdout pipe, so it is awaited.
    await expect
      .poll(() => logs.some((l) => l.includes('"source":"console"') && l.includes("PAYMENT-SIGNATURE")), {
        timeout: 30_000,
      })
      .toBe(true);
    // What the services logged of all that carries no terminal control character.
    expect(logs.filter(hasTerminalControl)).toEqual([]);
  }, 600_000);

  it("answers a half-sent body with 408 within the request timeout, on every service", async () => {
    for (const service of SERVICE_NAMES) {
      const { port } = new URL(stack.urls[service]);
      const started = Date.now();
      const answer = await new Promise<string>((resolve) => {
        const socket = net.connect(Number(port), "127.0.0.1", () =>
          socket.write(
            `POST /readyz HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":`,
          ),
        );
        let text = "";
        socket.on("data", (d) => {
          text += d;
        });
        socket.on("close", () => resolve(text));
        socket.on("error", () => resolve(text));
        setTimeout(() => socket.destroy(), HELD_MS);
      });
      expect({ service, held: Date.now() - started < REQUEST_TIMEOUT_MS + 3_000 }).toEqual({
        service,
        held: true,
      });
      expect(answer, service).toMatch(/^HTTP\/1\.1 (408|404)/);
    }
  });

  it("tells clients apart by X-Forwarded-For (TRUST_PROXY) on every rate-limited service", async () => {
    for (const service of SERVICE_NAMES.filter((s) => s !== "chain-indexer")) {
      const path = service === "attestations-api" ? "/api/v1/schemas" : "/docs/json";
      const from = async (ip: string) =>
        (await fetch(`${stack.urls[service]}${path}`, { headers: { "x-forwarded-for": ip } })).status;
      const statuses = [];
      for (let i = 0; i < 21; i++) statuses.push(await from("203.0.113.7"));
      expect({ service, last: statuses.at(-1) }).toEqual({ service, last: 429 });
      expect({ service, other: await from("203.0.113.8") }).toEqual({ service, other: 200 });
    }
  });

  it("listens on loopback only", async () => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === "IPv4" && !i.internal)?.address;
    for (const service of SERVICE_NAMES) {
      const { port } = new URL(stack.urls[service]);
      const reachable = external
        ? await new Promise<boolean>((resolve) => {
            const socket = net.connect(Number(port), external, () => {
              socket.destroy();
              resolve(true);
            });
            socket.on("error", () => resolve(false));
          })
        : false;
      expect({ service, reachable }).toEqual({ service, reachable: false });
    }
  });

  it("keeps serving without NATS, and answers 503 database_unavailable without Postgres", async () => {
    natsProxy.cut();
    try {
      for (const service of SERVICE_NAMES) {
        const ready = await fetch(`${stack.urls[service]}/readyz`);
        expect({ service, status: ready.status }).toEqual({ service, status: 200 });
        expect(await ready.json()).toMatchObject({ checks: { nats: "unavailable", postgres: "ok" } });
      }
    } finally {
      natsProxy.restore();
    }

    pgProxy.cut();
    try {
      // agent-auth issues a challenge without the database (its nonces are stateless); spending one needs it.
      const challenge = await fetch(`${stack.urls["agent-auth"]}/api/v1/challenge`);
      expect(challenge.status).toBe(200);
      const { nonce } = (await challenge.json()) as { nonce: string };
      const dbBacked: Array<[ServiceName, string, string, string?]> = [
        ["verifier", "GET", "/api/status/12345"],
        ["attestations-api", "GET", "/api/v1/schemas"],
        ["agent-auth", "POST", "/api/v1/claim", JSON.stringify({ nonce, signature: `0x${"00".repeat(65)}` })],
      ];
      for (const [service, method, path, body] of dbBacked) {
        const outcome = await send(service, method, path, {
          headers: { "content-type": "application/json" },
          body,
        });
        expect({ service, status: outcome.status }).toEqual({ service, status: 503 });
        expect(JSON.parse(outcome.body)).toMatchObject({ error: "database_unavailable" });
      }
      for (const service of SERVICE_NAMES) {
        const ready = await fetch(`${stack.urls[service]}/readyz`);
        expect({ service, status: ready.status }).toEqual({ service, status: 503 });
        expect(await ready.text()).not.toMatch(/ECONN|terminated|timeout/i);
      }
    } finally {
      pgProxy.restore();
    }
  }, 120_000);
});
