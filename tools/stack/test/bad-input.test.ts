/**
 * A hostile client's run over every endpoint of the five services, as `make up` starts them: malformed paths,
 * queries, bodies and headers never get a 5xx (but the verifier callback's 500, which spec 1 prescribes), and no
 * request is held past its timeout. Then the services lose Postgres (503 `database_unavailable`) and NATS (still
 * ready), both cut through TCP proxies this test controls.
 */
import net from "node:net";
import { networkInterfaces } from "node:os";
import { createTestDatabase, TcpProxy, type TestDatabase, testNatsUrl } from "@humanpass/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomPrefix, SERVICE_NAMES, type ServiceName, type Stack, startStack } from "../src/stack";

const REQUEST_TIMEOUT_MS = 2_000;
const HANDLER_TIMEOUT_MS = 8_000;
/** A request not answered by then was held past its timeout. */
const HELD_MS = HANDLER_TIMEOUT_MS + 4_000;

let database: TestDatabase;
let pgProxy: TcpProxy;
let natsProxy: TcpProxy;
let stack: Stack;
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
    prefix: randomPrefix(),
    log: (service, line) => logs.push(`${service} | ${line}`),
    logLevel: "warn",
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
}, 60_000);

interface Endpoint {
  method: string;
  path: string;
  params: string[];
  query: string[];
  hasBody: boolean;
}

/** The service's routes from its OpenAPI document, or its fixed ones (chain-indexer has no API). */
async function endpointsOf(service: ServiceName): Promise<Endpoint[]> {
  const fixed: Endpoint[] = ["/healthz", "/readyz", "/metrics"].map((path) => ({
    method: "GET",
    path,
    params: [],
    query: [],
    hasBody: false,
  }));
  const response = await fetch(`${stack.urls[service]}/docs/json`);
  if (response.status !== 200) return fixed;
  const doc = (await response.json()) as {
    paths: Record<
      string,
      Record<string, { parameters?: { in: string; name: string }[]; requestBody?: unknown }>
    >;
  };
  const out: Endpoint[] = [...fixed.slice(0, 2)];
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const parameters = op.parameters ?? [];
      out.push({
        method: method.toUpperCase(),
        path,
        params: parameters.filter((p) => p.in === "path").map((p) => p.name),
        query: parameters.filter((p) => p.in === "query").map((p) => p.name),
        hasBody: method !== "get" && method !== "delete",
      });
    }
  }
  return out;
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
];

const BAD_BODIES: Array<{ type: string; body: string }> = [
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
];

let client = 0;
/** Every request from a client address of its own, which only TRUST_PROXY makes the services see. */
function nextClient(): string {
  client++;
  return `10.${(client >> 16) & 255}.${(client >> 8) & 255}.${client & 255}`;
}

interface Outcome {
  service: ServiceName;
  request: string;
  status: number | "held";
  body: string;
}

async function send(
  service: ServiceName,
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string } = {},
): Promise<Outcome> {
  const request = `${method} ${path}${init.body !== undefined ? ` (${init.body.slice(0, 40)})` : ""} ${JSON.stringify(init.headers ?? {}).slice(0, 80)}`;
  try {
    const response = await fetch(`${stack.urls[service]}${path}`, {
      method,
      headers: { "x-forwarded-for": nextClient(), ...init.headers },
      body: init.body,
      signal: AbortSignal.timeout(HELD_MS),
    });
    return { service, request, status: response.status, body: (await response.text()).slice(0, 300) };
  } catch (e) {
    if ((e as Error).name === "TimeoutError") return { service, request, status: "held", body: "" };
    throw e;
  }
}

function fill(path: string, params: string[], value: string): string {
  let out = path;
  for (const p of params) out = out.replace(`{${p}}`, value);
  return out;
}

/** Spec 1: the verifier's callback answers 500 `{ error }` when token verification fails. */
function prescribed(o: Outcome): boolean {
  return (
    o.service === "verifier" &&
    o.request.startsWith("POST /api/callback") &&
    o.status === 500 &&
    Object.keys(JSON.parse(o.body)).join() === "error"
  );
}

describe("bad input over every endpoint", () => {
  it("never answers 5xx (but where a spec says so) and never holds a request past its timeout", async () => {
    const outcomes: Outcome[] = [];
    let endpoints = 0;
    for (const service of SERVICE_NAMES) {
      for (const e of await endpointsOf(service)) {
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
    expect(outcomes.length).toBeGreaterThan(700);
    const bad = outcomes.filter((o) => o.status === "held" || (o.status >= 500 && !prescribed(o)));
    expect(bad).toEqual([]);
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
      const dbBacked: Array<[ServiceName, string, string]> = [
        ["verifier", "GET", "/api/status/12345"],
        ["attestations-api", "GET", "/api/v1/schemas"],
        ["agent-auth", "GET", "/api/v1/challenge"],
      ];
      for (const [service, method, path] of dbBacked) {
        const outcome = await send(service, method, path, {
          headers: { "content-type": "application/json" },
          body: method === "POST" ? "{}" : undefined,
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
