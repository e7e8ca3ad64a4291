import { startTelemetry } from "@humanpass/telemetry";
import {
  connectTestNats,
  deleteTestStreams,
  eventually,
  type TestDatabase,
  testTopology,
} from "@humanpass/testing";
import type { NatsConnection } from "@nats-io/transport-node";
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { enqueue, ensureStreams, jetstreamManager, startConsumer, startOutboxRelay } from "../src";
import { logger, recordApplied, SCHEMA, setUpDatabase, testEvent } from "./harness";

const exporter = new InMemorySpanExporter();
const telemetry = startTelemetry({ serviceName: "events-test", spanExporter: exporter });
let database: TestDatabase;
let db: Kysely<any>;
let nc: NatsConnection;
const topology = testTopology();

beforeAll(async () => {
  ({ database, db } = await setUpDatabase("events_trace"));
  nc = await connectTestNats();
  await ensureStreams(await jetstreamManager(nc), topology, ["AGENT_AUTH"]);
});

afterAll(async () => {
  await deleteTestStreams(nc, topology);
  await nc.close();
  await db.destroy();
  await database.drop();
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
  const relay = startOutboxRelay({ db, nats: nc, schema: SCHEMA, logger, connectionString: database.url });
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
      await db.transaction().execute((trx) => enqueue(trx, topology, SCHEMA, testEvent(1)));
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
