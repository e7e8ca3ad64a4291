import { createPool, observePool } from "@humanpass/db";
import { createMetrics, type ServiceMetrics } from "@humanpass/telemetry";
import {
  connectTestNats,
  eventually,
  sampleValue,
  type TestDatabase,
  unboundedLabels,
} from "@humanpass/testing";
import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueue, observeNats, observeOutbox, startConsumer, startOutboxRelay } from "../src/index.ts";
import {
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
let metrics: ServiceMetrics;

beforeAll(async () => {
  ctx = await setUpEventsTest("events_metrics");
  ({ database, db, nc, topology } = ctx);
  metrics = createMetrics({ serviceName: "event-bus-test" });
});

afterAll(async () => {
  await metrics.shutdown();
  await ctx.tearDown();
});

const value = async (name: string, labels?: Record<string, string>) =>
  sampleValue(await metrics.render(), name, labels);

describe("event-bus series", () => {
  it("outbox: backlog and its oldest row's age while unpublished, then the relay's publishes", async () => {
    observeOutbox(metrics.meter, db);
    await db
      .transaction()
      .execute((trx) => enqueue(trx, topology, [testEvent(1), testEvent(2), testEvent(3)]));
    expect(await value("humanpass_outbox_pending_events")).toBe(3);
    expect(await value("humanpass_outbox_oldest_pending_age_seconds")).toBeGreaterThanOrEqual(0);

    const relay = startOutboxRelay({
      nats: nc,
      schema: SCHEMA,
      logger,
      connectionString: database.url,
      pollIntervalMs: 20,
      meter: metrics.meter,
    });
    try {
      await eventually(async () => (await value("humanpass_outbox_pending_events")) === 0);
      expect(await value("humanpass_outbox_oldest_pending_age_seconds")).toBe(0);
      await eventually(async () => (await value("humanpass_outbox_published_events_total")) === 3);
      expect(await value("humanpass_outbox_publish_duration_seconds_count")).toBeGreaterThanOrEqual(1);
    } finally {
      await relay.stop();
    }
  });

  it("consumer: applied by type, apply lag, redeliveries and dead letters, labelled by durable only", async () => {
    // Fails in the batch and once more alone: only a redelivery applies it.
    let failures = 0;
    const consumer = await startConsumer({
      db,
      nats: nc,
      topology,
      stream: "AGENT_AUTH",
      durable: "metered",
      logger,
      backoffMs: () => 50,
      meter: metrics.meter,
      handler: async (event, trx, delivery) => {
        if ((event.data as { n: number }).n === 2 && failures < 2) {
          failures++;
          throw new Error(`fails on attempt ${delivery.attempt}`);
        }
        await recordApplied(event, trx, delivery);
      },
    });
    try {
      const labels = { consumer: "metered" };
      await eventually(
        async () =>
          (await value("humanpass_consumer_events_applied_total", {
            ...labels,
            event_type: "human_not_registered",
          })) === 3,
      );
      expect(await value("humanpass_consumer_apply_lag_seconds_count", labels)).toBe(3);
      expect(await value("humanpass_consumer_redeliveries_total", labels)).toBeGreaterThanOrEqual(1);
      expect(await value("humanpass_consumer_dead_letters_total", labels)).toBe(0);

      await jetstream(nc).publish(`${topology.prefix}.agent_auth.human_not_registered`, "not an event");
      await eventually(async () => (await value("humanpass_consumer_dead_letters_total", labels)) === 1);
      expect(consumer.stats.lastAppliedEventTime).toBeGreaterThan(0);
      // The events' DIDs and ids are in their data, never in a label.
      expect(unboundedLabels(await metrics.render())).toEqual([]);
    } finally {
      await consumer.stop();
    }
  });

  it("NATS connection state: 1 while connected, 0 once closed", async () => {
    const own = createMetrics({ serviceName: "nats-test" });
    const connection = await connectTestNats();
    observeNats(own.meter, connection);
    expect(sampleValue(await own.render(), "humanpass_nats_connected")).toBe(1);
    await connection.close();
    expect(sampleValue(await own.render(), "humanpass_nats_connected")).toBe(0);
    await own.shutdown();
  });

  it("pg pool: connections in use and idle, waiting requests, size", async () => {
    const own = createMetrics({ serviceName: "pool-test" });
    const pool = createPool({ connectionString: database.url, schema: SCHEMA, max: 2 });
    observePool(own.meter, pool, SCHEMA);
    const held = await Promise.all([pool.connect(), pool.connect()]);
    const waiting = pool.query("select 1");
    const text = await own.render();
    const name = { db_client_connection_pool_name: SCHEMA };
    expect(
      sampleValue(text, "db_client_connection_count", { ...name, db_client_connection_state: "used" }),
    ).toBe(2);
    expect(
      sampleValue(text, "db_client_connection_count", { ...name, db_client_connection_state: "idle" }),
    ).toBe(0);
    expect(sampleValue(text, "db_client_connection_pending_requests", name)).toBe(1);
    expect(sampleValue(text, "db_client_connection_max", name)).toBe(2);
    for (const client of held) client.release();
    await waiting;
    await pool.end();
    await own.shutdown();
  });
});
