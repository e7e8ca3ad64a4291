import { startTelemetry } from "@humanpass/telemetry";
import { eventually, type TestDatabase } from "@humanpass/testing";
import type { NatsConnection } from "@nats-io/transport-node";
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { enqueue, startConsumer, startOutboxRelay } from "../src/index.ts";
import {
  type EventsTestContext,
  logger,
  recordApplied,
  SCHEMA,
  setUpEventsTest,
  testEvent,
} from "./support/harness.ts";

const exporter = new InMemorySpanExporter();
const telemetry = startTelemetry({ serviceName: "events-test", spanExporter: exporter });
let ctx: EventsTestContext;
let database: TestDatabase;
let db: Kysely<any>;
let nc: NatsConnection;
let topology: { prefix: string };

beforeAll(async () => {
  ctx = await setUpEventsTest("events_trace");
  ({ database, db, nc, topology } = ctx);
});

afterAll(async () => {
  await ctx.tearDown();
  await telemetry.shutdown();
});

function ancestors(span: ReadableSpan, all: ReadableSpan[]): string[] {
  const chain: string[] = [];
  let current: ReadableSpan | undefined = span;
  while (current) {
    const parentId: string | undefined = current.parentSpanContext?.spanId;
    current = all.find((s) => s.spanContext().spanId === parentId);
    if (current) chain.push(current.name);
  }
  return chain;
}

it("continues the producer's trace in the consumer across the outbox hop", async () => {
  const relay = startOutboxRelay({ nats: nc, schema: SCHEMA, logger, connectionString: database.url });
  const consumer = await startConsumer({
    db,
    nats: nc,
    topology,
    stream: "AGENT_AUTH",
    durable: "traced",
    handler: recordApplied,
    logger,
  });
  try {
    const producerTraceId = await trace.getTracer("test").startActiveSpan("claim request", async (span) => {
      await db.transaction().execute((trx) => enqueue(trx, topology, testEvent(1)));
      relay.wake();
      span.end();
      return span.spanContext().traceId;
    });
    const processSpan: ReadableSpan = await eventually(() =>
      exporter
        .getFinishedSpans()
        .find((s) => s.name === `process ${topology.prefix}.agent_auth.human_not_registered`),
    );
    const spans = exporter.getFinishedSpans();
    expect(processSpan.spanContext().traceId).toBe(producerTraceId);
    expect(ancestors(processSpan, spans)).toEqual([
      `publish ${topology.prefix}.agent_auth.human_not_registered`,
      "claim request",
    ]);
  } finally {
    await consumer.stop();
    await relay.stop();
  }
});

it("links a batch handler's span to every message of the batch, not only the first", async () => {
  const producers: string[] = [];
  // Three producers' traces, committed before the consumer starts so that they arrive as one batch.
  for (const n of [11, 12, 13]) {
    await trace.getTracer("test").startActiveSpan(`producer ${n}`, async (span) => {
      await db.transaction().execute((trx) => enqueue(trx, topology, testEvent(n)));
      producers.push(span.spanContext().traceId);
      span.end();
    });
  }
  const relay = startOutboxRelay({ nats: nc, schema: SCHEMA, logger, connectionString: database.url });
  await eventually(async () => {
    const left = await db
      .selectFrom("outbox")
      .select(db.fn.countAll().as("n"))
      .where("published_at", "is", null)
      .executeTakeFirstOrThrow();
    return Number(left.n) === 0;
  });
  await relay.stop();
  const batches: number[] = [];
  const consumer = await startConsumer({
    db,
    nats: nc,
    topology,
    stream: "AGENT_AUTH",
    durable: "traced-batch",
    logger,
    batchHandler: async (events) => {
      batches.push(events.length);
    },
  });
  try {
    // The stream also holds the first test's event: four messages, in one batch or (should they arrive apart) more.
    await eventually(() => batches.reduce((n, b) => n + b, 0) === 4);
    const prefix = `process ${topology.prefix}.agent_auth.human_not_registered (`;
    const batchSpans: ReadableSpan[] = await eventually(() => {
      const found = exporter.getFinishedSpans().filter((s) => s.name.startsWith(prefix));
      return found.length === batches.length && found;
    });
    for (const span of batchSpans) expect(`${prefix}${span.links.length})`).toBe(span.name);
    const linked = batchSpans.flatMap((span) => span.links.map((l) => l.context.traceId));
    for (const traceId of producers) expect(linked).toContain(traceId);
  } finally {
    await consumer.stop();
  }
});
