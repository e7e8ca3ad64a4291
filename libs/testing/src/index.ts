import { randomBytes } from "node:crypto";
import { type CloudEvent, ensureStreams, type StreamName, type Topology } from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import pg from "pg";
import { inject } from "vitest";
import type { Part } from "./stack.ts";

export { canConnect, resolveInfrastructure } from "./infrastructure.ts";
export { type ClusterNode, type NatsCluster, startNatsCluster } from "./nats-cluster.ts";
export { type OwnNatsServer, startOwnNatsServer } from "./nats-server.ts";
export { freePort } from "./ports.ts";
export { type OwnPostgres, PostgresWorkDir, runPostgresProgram } from "./postgres-server.ts";
export { parseExposition, type Sample, sampleValue, unboundedLabels } from "./prometheus.ts";
export { startServiceMain } from "./service-main.ts";
export {
  REPO_ROOT,
  type ServiceProcess,
  type ServiceProcessOptions,
  spawnServiceProcess,
  startServiceProcess,
  waitUntilReady,
} from "./service-process.ts";
export { buildStack, type Part, type RunningStack, StackBuilder, type StackControl } from "./stack.ts";

export function testDatabaseUrl(): string {
  return inject("databaseUrl");
}

export function testNatsUrl(): string {
  return inject("natsUrl");
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh database for one test file, dropped (with its connections) by `drop`. */
export async function createTestDatabase(label = "t"): Promise<TestDatabase> {
  const base = testDatabaseUrl();
  const name = `${label.replace(/[^a-z0-9_]/g, "_").slice(0, 30)}_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Client({ connectionString: withDatabase(base, "postgres") });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: withDatabase(base, name),
    async drop() {
      const c = new pg.Client({ connectionString: withDatabase(base, "postgres") });
      await c.connect();
      try {
        // pg's Pool.end() resolves once it has asked its clients to close, not once their sessions have ended: a
        // forced drop at that moment terminates them, and a client that reads the termination before its socket
        // closes raises it as an uncaught error. Their sessions are waited for (briefly: `with (force)` still ends
        // those a test left open).
        for (const until = Date.now() + 1_000; Date.now() < until; await sleep(10)) {
          const { rows } = await c.query<{ n: number }>(
            "select count(*)::int as n from pg_stat_activity where datname = $1",
            [name],
          );
          if (rows[0]?.n === 0) break;
        }
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A subject/stream prefix of its own for one test file; `cleanup` deletes its streams. */
export function testTopology(): { prefix: string } {
  return { prefix: `t${randomBytes(5).toString("hex")}` };
}

export async function connectTestNats(): Promise<NatsConnection> {
  return connect({ servers: testNatsUrl(), maxReconnectAttempts: -1, reconnectTimeWait: 200 });
}

/** Deletes every stream whose name starts with the topology's prefix. */
export async function deleteTestStreams(nc: NatsConnection, topology: { prefix: string }): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const prefix = `${topology.prefix.toUpperCase()}_`;
  for await (const s of jsm.streams.list()) {
    if (s.config.name.startsWith(prefix)) await jsm.streams.delete(s.config.name);
  }
}

/** A stack part: a database of its own (see `createTestDatabase`), dropped when the stack stops. */
export function testDatabase(label?: string): Part<object, TestDatabase> {
  return { start: () => createTestDatabase(label), stop: (database) => database.drop() };
}

export interface TestBus {
  nats: NatsConnection;
  topology: Topology;
  /** What arrived on the subject `record` names, in arrival order. */
  events: CloudEvent<any>[];
}

/**
 * A stack part: a NATS connection with a prefix of its own and its streams created (the topology step creates
 * them in a deployment), recording the events published under `${prefix}.${record}` when `record` is given; the
 * streams are deleted when the stack stops.
 */
export function testBus(options: { streams: StreamName[]; record?: string }): Part<object, TestBus> {
  let unsubscribe = () => {};
  return {
    async start() {
      const nats = await connectTestNats();
      const topology = testTopology();
      try {
        await ensureStreams(await jetstreamManager(nats), topology, options.streams);
      } catch (e) {
        await nats.close();
        throw e;
      }
      const events: CloudEvent<any>[] = [];
      if (options.record) {
        const subscription = nats.subscribe(`${topology.prefix}.${options.record}`, {
          callback: (_error, message) => {
            events.push(message.json() as CloudEvent<any>);
          },
        });
        unsubscribe = () => subscription.unsubscribe();
      }
      return { nats, topology, events };
    },
    async stop({ nats, topology }) {
      unsubscribe();
      try {
        await deleteTestStreams(nats, topology);
      } finally {
        await nats.close();
      }
    },
  };
}

/** Polls until `check` returns a truthy value or the timeout passes; returns that value. */
export async function eventually<T>(
  check: () => Promise<T> | T,
  timeoutMs = 15_000,
  intervalMs = 50,
): Promise<Exclude<T, undefined | null | false | 0 | "">> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as Exclude<T, undefined | null | false | 0 | "">;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `condition not met within ${timeoutMs} ms${lastError ? `: ${(lastError as Error).message}` : ""}`,
      );
    }
    await sleep(intervalMs);
  }
}

export { TcpProxy } from "./tcp-proxy.ts";
