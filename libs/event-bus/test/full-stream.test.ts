import { createMetrics, type ServiceMetrics } from "@humanpass/telemetry";
import { eventually, sampleValue, type TestDatabase } from "@humanpass/testing";
import { DiscardPolicy, type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  enqueue,
  ensureDurable,
  ensureStreams,
  observeJetStream,
  observeOutbox,
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

// A stream of 16 KiB holds a few dozen test events: 120 overfill it several times.
const LIMIT_BYTES = 16 * 1024;
const EVENTS = 120;
const DURABLE = "lagging";

let ctx: EventsTestContext;
let database: TestDatabase;
let db: Kysely<any>;
let nc: NatsConnection;
let topology: { prefix: string };
let jsm: JetStreamManager;
let metrics: ServiceMetrics;
let stream: string;

beforeAll(async () => {
  ctx = await setUpEventsTest("events_full_stream");
  ({ database, db, nc, topology } = ctx);
  jsm = await jetstreamManager(nc);
  stream = streamName(topology, "AGENT_AUTH");
  // A stream as an earlier release's topology step left it (discard old), then what this one applies with
  // JETSTREAM_AGENT_AUTH_MAX_BYTES=16KiB: the existing stream is switched to discard new.
  const old = await jsm.streams.info(stream);
  await jsm.streams.update(stream, { ...old.config, discard: DiscardPolicy.Old });
  await ensureStreams(jsm, topology, ["AGENT_AUTH"], {
    retention: { AGENT_AUTH: { maxAgeMs: 0, maxBytes: LIMIT_BYTES } },
  });
  expect((await jsm.streams.info(stream)).config.discard).toBe(DiscardPolicy.New);
  // The durable exists (its service created it once) but nothing reads it: a receiver outage, a stopped service.
  await ensureDurable(jsm, topology, { stream: "AGENT_AUTH", durable: DURABLE });
  metrics = createMetrics({ serviceName: "event-bus-test" });
  observeOutbox(metrics.meter, db);
  observeJetStream(metrics.meter, jsm, { streams: [stream], durables: () => [{ stream, durable: DURABLE }] });
});

afterAll(async () => {
  await metrics.shutdown();
  await ctx.tearDown();
});

const value = async (name: string, labels?: Record<string, string>) =>
  (await sampleValue(await metrics.render(), name, labels)) ?? Number.NaN;

describe("a full stream with a lagging durable", () => {
  it("refuses new events instead of dropping unread ones: the outbox keeps them, the metrics show it, and every event is applied once room is made", async () => {
    await db.transaction().execute((trx) =>
      enqueue(
        trx,
        topology,
        Array.from({ length: EVENTS }, (_, i) => testEvent(i)),
      ),
    );
    const relay = startOutboxRelay({
      nats: nc,
      schema: SCHEMA,
      logger,
      connectionString: database.url,
      pollIntervalMs: 20,
      maxBackoffMs: 200,
      meter: metrics.meter,
    });
    let consumer: Awaited<ReturnType<typeof startConsumer>> | undefined;
    try {
      // The stream fills and then refuses: the relay's batches fail and the rest of the events stay in the outbox.
      await eventually(async () => (await value("humanpass_outbox_publish_failures_total")) > 0, 30_000);
      const stored = (await jsm.streams.info(stream)).state;
      expect(stored.first_seq).toBe(1);
      expect(stored.messages).toBeGreaterThan(0);
      expect(stored.messages).toBeLessThan(EVENTS);
      // A refused batch stays unpublished as a whole: its events the stream took are published again later and
      // deduplicated (Nats-Msg-Id, then the consumer's inbox).
      expect(await value("humanpass_outbox_pending_events")).toBeGreaterThanOrEqual(EVENTS - stored.messages);

      // What the alerts read: the stream at its limit (HumanpassStreamNearFull: over 80 %), every stored event
      // still unread by the durable, nothing acked, the outbox's oldest row ageing (HumanpassOutboxStale).
      const labels = { stream };
      const used =
        (await value("humanpass_jetstream_stream_bytes", labels)) /
        (await value("humanpass_jetstream_stream_limit_bytes", labels));
      expect(used).toBeGreaterThan(0.8);
      expect(await value("humanpass_jetstream_stream_messages", labels)).toBe(stored.messages);
      const durable = { stream, consumer: DURABLE };
      expect(await value("humanpass_jetstream_consumer_pending_messages", durable)).toBe(stored.messages);
      expect(await value("humanpass_jetstream_consumer_ack_floor_sequence", durable)).toBe(0);
      expect(await value("humanpass_outbox_oldest_pending_age_seconds")).toBeGreaterThan(0);

      // The durable catches up on everything the stream holds: the first event is there, none was dropped.
      consumer = await startConsumer({
        db,
        nats: nc,
        topology,
        stream: "AGENT_AUTH",
        durable: DURABLE,
        handler: recordApplied,
        logger,
      });
      await eventually(async () => (await appliedCounts(db)).distinct === stored.messages, 30_000);
      await eventually(
        async () =>
          (await value("humanpass_jetstream_consumer_ack_floor_sequence", durable)) === stored.last_seq,
      );

      // The runbook's action: more room (the topology step with a larger JETSTREAM_AGENT_AUTH_MAX_BYTES). The relay
      // publishes what the outbox kept, and the durable applies every event, each once.
      await ensureStreams(jsm, topology, ["AGENT_AUTH"], {
        retention: { AGENT_AUTH: { maxAgeMs: 0, maxBytes: 64 * LIMIT_BYTES } },
      });
      await eventually(async () => (await value("humanpass_outbox_pending_events")) === 0, 30_000);
      await eventually(async () => (await appliedCounts(db)).distinct === EVENTS, 30_000);
      const rows = await db.selectFrom("applied").select("n").distinct().orderBy("n").execute();
      expect(rows.map((r) => r.n)).toEqual(Array.from({ length: EVENTS }, (_, i) => i));
      expect((await jsm.streams.info(stream)).state.first_seq).toBe(1);
    } finally {
      await consumer?.stop();
      await relay.stop();
    }
  });
});
