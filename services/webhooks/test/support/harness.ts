import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Kysely } from "@humanpass/db";
import { ensureStreams, jetstreamManager, STREAMS, type StreamName } from "@humanpass/event-bus";
import type { HttpApp } from "@humanpass/http";
import { type Clock, prepareConnections } from "@humanpass/service";
import {
  connectTestNats,
  createTestDatabase,
  deleteTestStreams,
  type TestDatabase,
  testTopology,
} from "@humanpass/testing";
import type { NatsConnection } from "@nats-io/transport-node";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import pino from "pino";
import {
  type AddressPolicy,
  buildApp,
  createDeliveryMetrics,
  type DeliveryMetrics,
  migrations,
  SCHEMA,
  type WebhooksDb,
} from "../../src/index.ts";

export const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
export const ADMIN_TOKEN = "test-admin-token-0123456789abcdef0123";
export const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** Collects on demand only: the test reads the counters when it wants them. */
class OnDemandReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** Delivery counters on a real OpenTelemetry SDK meter, and their non-zero totals by name and outcome. */
export function recordedMetrics(): { metrics: DeliveryMetrics; totals(): Promise<Record<string, number>> } {
  const reader = new OnDemandReader();
  const provider = new MeterProvider({ readers: [reader] });
  return {
    metrics: createDeliveryMetrics(provider.getMeter("test")),
    async totals() {
      const { resourceMetrics } = await reader.collect();
      const out: Record<string, number> = {};
      for (const scope of resourceMetrics.scopeMetrics)
        for (const metric of scope.metrics)
          for (const point of metric.dataPoints) {
            const outcome = point.attributes.outcome;
            // The counters start at 0: what a test compares is what was counted.
            if (point.value === 0) continue;
            out[`${metric.descriptor.name}${outcome ? `{${outcome}}` : ""}`] = point.value as number;
          }
      return out;
    },
  };
}

/** A clock the test moves by hand. */
export function fakeClock(start = Date.parse("2026-11-26T00:00:00.000Z")) {
  let now = start;
  const clock: Clock = () => now;
  return {
    clock,
    /** The clock's time as a Date. */
    now: () => new Date(now),
    advance: (ms: number) => {
      now += ms;
    },
    set: (at: Date) => {
      now = Math.max(now, at.getTime());
    },
    elapsedMs: () => now - start,
  };
}

export interface Harness {
  database: TestDatabase;
  db: Kysely<WebhooksDb>;
  nats: NatsConnection;
  topology: { prefix: string };
  close(): Promise<void>;
}

export async function setUp(label: string): Promise<Harness> {
  const database = await createTestDatabase(label);
  const topology = testTopology();
  const streams = Object.keys(STREAMS) as StreamName[];
  const prepared = await prepareConnections({
    name: "webhooks",
    schema: SCHEMA,
    migrations,
    streams,
    publishes: false,
    databaseUrl: database.url,
    topology,
    logger,
    // The topology step creates the streams in a deployment; here the test does.
    async connectNats() {
      const nats = await connectTestNats();
      await ensureStreams(await jetstreamManager(nats), topology, streams);
      return nats;
    },
    pool: { max: 10 },
  });
  const db = prepared.db as Kysely<WebhooksDb>;
  const { nats } = prepared;
  return {
    database,
    db,
    nats,
    topology,
    async close() {
      await deleteTestStreams(nats, topology);
      await nats.close();
      await db.destroy();
      await database.drop();
    },
  };
}

export function adminApp(db: Kysely<WebhooksDb>, policy: AddressPolicy, clock: Clock): Promise<HttpApp> {
  return buildApp({ logger, db, policy, clock, adminToken: ADMIN_TOKEN });
}

export interface Receiver {
  url: string;
  close(): Promise<void>;
}

/** An HTTP receiver on 127.0.0.1 answering with `respond(request, rawBody)`: a status, or "drop" to cut the line. */
export async function startReceiver(
  respond: (request: IncomingMessage, body: string) => number | "drop",
): Promise<Receiver> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      const outcome = respond(request, Buffer.concat(chunks).toString("utf8"));
      if (outcome === "drop") request.socket.destroy();
      else response.writeHead(outcome).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface StallingReceiver extends Receiver {
  /** Connections open at the receiver now, and the most ever open at once. */
  sockets(): { open: number; most: number };
}

/**
 * A receiver on 127.0.0.1 that never finishes an answer: `silent` reads the request and says nothing; `trickle`
 * answers 200 and then sends its body a byte every 20 ms, forever. `close` cuts whatever is still open.
 */
export async function startStallingReceiver(mode: "silent" | "trickle"): Promise<StallingReceiver> {
  let open = 0;
  let most = 0;
  const trickles = new Set<NodeJS.Timeout>();
  const server: Server = createServer((request, response) => {
    request.resume();
    if (mode === "silent") return;
    response.writeHead(200, { "content-type": "text/plain" });
    const timer = setInterval(() => response.write("."), 20);
    trickles.add(timer);
    response.on("close", () => {
      clearInterval(timer);
      trickles.delete(timer);
    });
  });
  server.on("connection", (socket) => {
    open++;
    most = Math.max(most, open);
    socket.on("close", () => open--);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    sockets: () => ({ open, most }),
    close: () =>
      new Promise((resolve) => {
        for (const timer of trickles) clearInterval(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
