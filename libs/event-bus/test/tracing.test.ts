import { startTelemetry } from "@humanpass/telemetry";
import { eventually, type TestDatabase } from "@humanpass/testing";
import type { NatsConnection } from "@nats-io/transport-node";
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { enqueue, startConsumer, startOutboxRelay } from "../src";
import { type EventsTestContext, logger, recordApplied, SCHEMA, setUpEventsTest, testEvent } from "./harness";

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
