import { sleep } from "@humanpass/retry";
import { eventually, TcpProxy, type TestDatabase, testNatsUrl } from "@humanpass/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectNats,
  enqueue,
  type OutboxRelayOptions,
  startConsumer,
  startOutboxRelay,
  streamName,
} from "../src/index.ts";
import {
  appliedCounts,
  type EventsTestContext,
  logger,
  recordApplied,
  SCHEMA,
  setUpEventsTest,
  testEvent,
} from "./support/harness.ts";

let ctx: EventsTestContext;
let database: TestDatabase;
let db: Kysely<any>;
let nc: NatsConnection;
let topology: { prefix: string };

beforeAll(async () => {
  ctx = await setUpEventsTest("events_outbox");
  ({ database, db, nc, topology } = ctx);
});

afterAll(async () => {
  await ctx.tearDown();
});

async function enqueueMany(count: number, offset = 0) {
  for (let i = 0; i < count; i += 250) {
    await db.transaction().execute((trx) =>
      enqueue(
        trx,
        topology,
        Array.from({ length: Math.min(250, count - i) }, (_, j) => testEvent(offset + i + j)),
      ),
    );
  }
}

function startRelay(options: Partial<OutboxRelayOptions> = {}) {
  return startOutboxRelay({ nats: nc, schema: SCHEMA, logger, connectionString: database.url, ...options });
}

async function unpublished(): Promise<number> {
  const { n } = await db
    .selectFrom("outbox")
    .select(db.fn.countAll().as("n"))
    .where("published_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(n);
}

async function streamMessageIds(): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(streamName(topology, "AGENT_AUTH"));
  const ids: string[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(streamName(topology, "AGENT_AUTH"), { seq });
    if (m) ids.push(m.header.get("Nats-Msg-Id"));
  }
  return ids;
}

describe("outbox relay and inbox consumer", () => {
  it("delivers 1,000 events committed while NATS was unreachable, each applied once", async () => {
    await db.deleteFrom("applied").execute();
    const proxy = await TcpProxy.forUrl(testNatsUrl()).start();
    const relayNats = await connectNats(proxy.url(testNatsUrl()), logger);
    proxy.cut();
    const relay = startRelay({ nats: relayNats, publishTimeoutMs: 500, maxBackoffMs: 500 });
    const consumer = await startConsumer({
      db,
      nats: nc,
      topology,
      stream: "AGENT_AUTH",
      durable: "outage",
      handler: recordApplied,
      logger,
    });
    try {
      await enqueueMany(1_000);
      await eventually(() => relay.stats.failures > 0, 10_000);
      expect(relay.stats.published).toBe(0);
      expect(await unpublished()).toBe(1_000);

      proxy.restore();
      await eventually(async () => (await appliedCounts(db)).total >= 1_000, 30_000);
      await sleep(300);
      expect(await appliedCounts(db)).toEqual({ total: 1_000, distinct: 1_000 });
      const rows = await db.selectFrom("applied").select("n").orderBy("n").execute();
      expect(rows.map((r) => r.n)).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
    } finally {
      await consumer.stop();
      await relay.stop();
      await relayNats.close();
      await proxy.stop();
    }
  });

  it("publishes every event exactly once with two relays on one outbox", async () => {
    await db.deleteFrom("outbox").execute();
    const before = (await streamMessageIds()).length;
    const relays = [1, 2].map(() => startRelay({ batchSize: 50, pollIntervalMs: 20 }));
    try {
      await enqueueMany(2_000, 10_000);
      await eventually(async () => (await unpublished()) === 0, 30_000);
    } finally {
      await Promise.all(relays.map((r) => r.stop()));
    }
    expect(relays[0].stats.published + relays[1].stats.published).toBe(2_000);
    expect(relays[0].stats.published).toBeGreaterThan(0);
    expect(relays[1].stats.published).toBeGreaterThan(0);
    const ids = (await streamMessageIds()).slice(before);
    expect(ids).toHaveLength(2_000);
    expect(new Set(ids).size).toBe(2_000);
    const outboxIds = (await db.selectFrom("outbox").select("id").execute()).map((r) => r.id);
    expect(new Set(ids)).toEqual(new Set(outboxIds));
  });

  it("publishes at once when its process wakes it after a commit, and another process's rows at its next poll", async () => {
    const woken = startRelay({ pollIntervalMs: 600_000 });
    try {
      await sleep(500);
      const before = woken.stats.published;
      await enqueueMany(3, 50_000);
      woken.wake();
      await eventually(() => woken.stats.published === before + 3, 10_000);
    } finally {
      await woken.stop();
    }
    // Committed by a process whose relay never runs: a relay elsewhere finds the rows by its poll.
    await enqueueMany(2, 50_100);
    const polling = startRelay({ pollIntervalMs: 100 });
    try {
      await eventually(async () => (await unpublished()) === 0, 10_000);
      expect(polling.stats.published).toBe(2);
    } finally {
      await polling.stop();
    }
  });

  it("keeps backing off while NATS is away, however often its process wakes it", async () => {
    const proxy = await TcpProxy.forUrl(testNatsUrl()).start();
    const relayNats = await connectNats(proxy.url(testNatsUrl()), logger);
    proxy.cut();
    const relay = startRelay({ nats: relayNats, publishTimeoutMs: 20, maxBackoffMs: 60_000 });
    try {
      await enqueueMany(1, 55_000);
      await eventually(() => relay.stats.failures > 0, 10_000);
      // A commit every 10 ms for 2 s: back-off waits of 0.1, 0.2, 0.4, 0.8 and 1.6 s leave room for six attempts
      // at most, where each wake cutting the wait short would start one every publish timeout (20 ms).
      for (let i = 0; i < 200; i++) {
        relay.wake();
        await sleep(10);
      }
      expect(relay.stats.failures).toBeLessThanOrEqual(8);
      expect(relay.stats.published).toBe(0);
    } finally {
      await relay.stop();
      await relayNats.close();
      await proxy.stop();
    }
    const after = startRelay({ pollIntervalMs: 100 });
    try {
      await eventually(async () => (await unpublished()) === 0, 10_000);
    } finally {
      await after.stop();
    }
  });

  it("leaves the database's other backends alone: an outbox insert notifies nobody", async () => {
    const listener = new pg.Client({ connectionString: database.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on("notification", (n) => heard.push(n.channel));
    try {
      await listener.query(`listen "outbox_${SCHEMA}"`);
      await enqueueMany(1, 56_000);
      // A notification rides on the next message its connection receives: this query's answer.
      await listener.query("select 1");
      expect(heard).toEqual([]);
    } finally {
      await listener.end();
    }
  });

  it("publishes the commits that land while it gathers in one batch", async () => {
    const relay = startRelay({ pollIntervalMs: 600_000, gatherMs: 1_000 });
    try {
      await sleep(500);
      const before = relay.stats.published;
      await enqueueMany(1, 60_000);
      relay.wake();
      await sleep(100);
      await enqueueMany(1, 60_001);
      relay.wake();
      await eventually(() => relay.stats.published === before + 2, 10_000);
    } finally {
      await relay.stop();
    }
    // A batch is marked in one transaction, so its rows share one publication time.
    const { rows } = await sql<{ batches: number }>`
      select count(distinct published_at)::int as batches from outbox
      where event->'data'->>'n' in ('60000', '60001')`.execute(db);
    expect(rows[0]?.batches).toBe(1);
  });

  it("reconnects to Postgres after losing its connection and publishes what was committed meanwhile", async () => {
    const proxy = await TcpProxy.forUrl(database.url).start();
    const relay = startRelay({
      connectionString: proxy.url(database.url),
      pollIntervalMs: 50,
      maxBackoffMs: 200,
    });
    try {
      await enqueueMany(10, 60_000);
      await eventually(() => relay.stats.published >= 10, 10_000);
      const published = relay.stats.published;
      proxy.cut();
      await enqueueMany(200, 60_010);
      await eventually(() => relay.stats.failures > 0, 10_000);
      expect(relay.stats.published).toBe(published);
      proxy.restore();
      await eventually(() => relay.stats.published === published + 200, 10_000);
      expect(await unpublished()).toBe(0);
    } finally {
      await relay.stop();
      await proxy.stop();
    }
  });

  it("carries on after its database session is terminated", async () => {
    const relay = startRelay({ pollIntervalMs: 50, maxBackoffMs: 200 });
    try {
      await enqueueMany(5, 70_000);
      await eventually(() => relay.stats.published >= 5, 10_000);
      const { rows } = await sql<{ terminated: boolean }>`
        select pg_terminate_backend(pid) as terminated from pg_stat_activity
        where application_name = ${`outbox-relay ${SCHEMA}`} and datname = current_database()`.execute(db);
      expect(rows).toEqual([{ terminated: true }]);
      const published = relay.stats.published;
      await enqueueMany(50, 70_005);
      await eventually(() => relay.stats.published === published + 50, 10_000);
    } finally {
      await relay.stop();
    }
  });

  it("gives up a connection that stopped answering and publishes through a new one", async () => {
    const proxy = await TcpProxy.forUrl(database.url).start();
    const relay = startRelay({
      connectionString: proxy.url(database.url),
      pollIntervalMs: 50,
      maxBackoffMs: 200,
      queryTimeoutMs: 500,
    });
    try {
      await enqueueMany(5, 80_000);
      await eventually(() => relay.stats.published >= 5, 10_000);
      const published = relay.stats.published;
      proxy.stall();
      await enqueueMany(50, 80_005);
      await eventually(() => relay.stats.published === published + 50, 15_000);
      expect(relay.stats.failures).toBeGreaterThan(0);
    } finally {
      await relay.stop();
      await proxy.stop();
    }
  });
});
