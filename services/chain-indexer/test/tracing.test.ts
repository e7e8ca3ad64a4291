import { mine, registerSchema } from "@humanpass/devnet";
import { startTelemetry } from "@humanpass/telemetry";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "./harness.ts";

const exporter = new InMemorySpanExporter();
// Before the chain client exists: fetch (undici) and pg are instrumented from here on.
const telemetry = startTelemetry({ serviceName: "chain-indexer", spanExporter: exporter });
let stack: Stack;

beforeAll(async () => {
  stack = await startStack("chain_indexer_tracing");
  await registerSchema(stack.devnet, { name: "Traced", schema: "bytes data" });
  await mine(stack.devnet, 2);
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await telemetry.shutdown();
});

describe("traces of block processing", () => {
  it("gives each range one trace, its RPC calls as children and its events in it; idle polls start none", async () => {
    const { indexer } = stack.indexer();
    exporter.reset();
    await stack.drain(indexer);
    // Idle steps: the head poll alone, untraced.
    await indexer.step();
    await indexer.step();
    const spans = exporter.getFinishedSpans();
    const ranges = spans.filter((s) => s.name === "index blocks");
    expect(ranges.length).toBeGreaterThanOrEqual(1);
    for (const range of ranges) {
      expect(range.parentSpanContext).toBeUndefined();
      expect(range.attributes["humanpass.chain.from_block"]).toBe(0);
      expect(range.attributes["humanpass.chain.to_block"]).toBeGreaterThan(0);
    }
    const ids = new Set(ranges.map((r) => r.spanContext().spanId));
    const traces = new Set(ranges.map((r) => r.spanContext().traceId));
    const isRpc = (s: ReadableSpan) => String(s.attributes["url.full"] ?? "").startsWith(stack.devnet.rpcUrl);
    const rpcCalls = spans.filter(isRpc);
    expect(rpcCalls.length).toBeGreaterThan(0);
    // Every RPC call is a child of a range: none is a trace of its own.
    for (const call of rpcCalls) expect(ids.has(call.parentSpanContext?.spanId ?? "")).toBe(true);
    // The events the range wrote carry its trace on to their consumers.
    const rows = await stack.db.selectFrom("outbox").select("trace").execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const { trace } of rows) expect(traces.has(trace.traceparent?.split("-")[1] ?? "")).toBe(true);
  });
});
