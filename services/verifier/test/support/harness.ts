import type { Kysely } from "@humanpass/db";
import {
  type CloudEvent,
  ensureStreams,
  jetstreamManager,
  type NatsConnection,
  type OutboxRelay,
  streamName,
  type Topology,
} from "@humanpass/event-bus";
import type { HttpApp } from "@humanpass/http";
import { type Clock, prepareConnections } from "@humanpass/service";
import type { Logger, ServiceMetrics } from "@humanpass/telemetry";
import {
  connectTestNats,
  createTestDatabase,
  deleteTestStreams,
  type TestDatabase,
  testTopology,
} from "@humanpass/testing";
import { buildVerifierApp } from "../../src/app.ts";
import { migrations } from "../../src/db/migrations/index.ts";
import { SCHEMA, type VerifierDatabase } from "../../src/db/schema.ts";
import type { TokenVerifier } from "../../src/verification/token-verifier.ts";
import { logger, testSettings } from "./settings.ts";

export { logger, testSettings };

/** A clock the test moves by hand. */
export function testClock(start = Date.parse("2026-01-01T00:00:00Z")): {
  clock: Clock;
  /** The clock's time as a Date. */
  now(): Date;
  advance(ms: number): void;
} {
  let now = start;
  return {
    clock: () => now,
    now: () => new Date(now),
    advance: (ms) => {
      now += ms;
    },
  };
}

/** Database (migrated), NATS stream, outbox relay: what one verifier deployment shares. */
export interface Backend {
  database: TestDatabase;
  db: Kysely<VerifierDatabase>;
  nats: NatsConnection;
  topology: Topology;
  relay: OutboxRelay;
  close(): Promise<void>;
}

export async function startBackend(label: string): Promise<Backend> {
  const database = await createTestDatabase(label);
  const topology = testTopology();
  const prepared = await prepareConnections({
    name: "verifier",
    schema: SCHEMA,
    migrations,
    streams: ["VERIFIER"],
    publishes: true,
    databaseUrl: database.url,
    topology,
    logger,
    // The topology step creates the streams in a deployment; here the test does.
    async connectNats() {
      const nats = await connectTestNats();
      await ensureStreams(await jetstreamManager(nats), topology, ["VERIFIER"]);
      return nats;
    },
    pool: { max: 10 },
    relay: { pollIntervalMs: 200 },
  });
  const db = prepared.db as Kysely<VerifierDatabase>;
  const { nats } = prepared;
  const relay = prepared.relay!;
  return {
    database,
    db,
    nats,
    topology,
    relay,
    async close() {
      await relay.stop();
      await deleteTestStreams(nats, topology);
      await nats.drain();
      await db.destroy();
      await database.drop();
    },
  };
}

export async function startApp(
  backend: Backend,
  options: {
    verifier: TokenVerifier;
    clock?: Clock;
    drawSessionId?: () => number;
    rateLimit?: false | { max: number; timeWindowMs: number };
    corsOrigins?: string[];
    /** Where the app logs; the silent test logger when absent. */
    logger?: Logger;
    metrics?: ServiceMetrics;
  },
): Promise<HttpApp> {
  return buildVerifierApp({
    logger: options.logger ?? logger,
    db: backend.db,
    topology: backend.topology,
    settings: testSettings,
    verifier: options.verifier,
    clock: options.clock,
    drawSessionId: options.drawSessionId,
    outboxCommitted: () => backend.relay.wake(),
    rateLimit: options.rateLimit ?? false,
    corsOrigins: options.corsOrigins,
    metrics: options.metrics,
  });
}

/** Every event in the test's VERIFIER stream, oldest first. */
export async function verifierEvents(backend: Backend): Promise<CloudEvent[]> {
  const jsm = await jetstreamManager(backend.nats);
  const name = streamName(backend.topology, "VERIFIER");
  const info = await jsm.streams.info(name);
  const events: CloudEvent[] = [];
  for (let seq = info.state.first_seq; info.state.messages > 0 && seq <= info.state.last_seq; seq++) {
    const message = await jsm.streams.getMessage(name, { seq });
    if (message) events.push(message.json<CloudEvent>());
  }
  return events;
}
