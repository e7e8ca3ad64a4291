import { createMetrics, type ServiceMetrics } from "@humanpass/telemetry";
import { sampleValue, TcpProxy, testNatsUrl } from "@humanpass/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueue, ensureDurable, observeJetStream, observeOutbox, streamName } from "../src/index.ts";
import { type EventsTestContext, setUpEventsTest, testEvent } from "./support/harness.ts";

const DURABLE = "observed";

let ctx: EventsTestContext;
let proxy: TcpProxy;
let viaProxy: NatsConnection;
let metrics: ServiceMetrics;
let stream: string;

beforeAll(async () => {
  ctx = await setUpEventsTest("events_jetstream_metrics");
  stream = streamName(ctx.topology, "AGENT_AUTH");
  await ensureDurable(await jetstreamManager(ctx.nc), ctx.topology, {
    stream: "AGENT_AUTH",
    durable: DURABLE,
  });
  proxy = await TcpProxy.forUrl(testNatsUrl()).start();
  viaProxy = await connect({ servers: proxy.url(testNatsUrl()) });
  metrics = createMetrics({ serviceName: "event-bus-test" });
  observeOutbox(metrics.meter, ctx.db);
  // A JetStream API that would wait a minute for an answer: the scrape must not.
  observeJetStream(metrics.meter, await jetstreamManager(viaProxy, { timeout: 60_000 }), {
    streams: [stream],
    durables: () => [{ stream, durable: DURABLE }],
  });
});

afterAll(async () => {
  await metrics?.shutdown();
  await viaProxy?.close().catch(() => {});
  await proxy?.stop();
  await ctx?.tearDown();
});

describe("JetStream's view in the service's metrics", () => {
  it("reports the stream, the account and the durable while NATS answers", async () => {
    const text = await metrics.render();
    expect(sampleValue(text, "humanpass_jetstream_stream_messages", { stream })).toBe(0);
    expect(sampleValue(text, "humanpass_jetstream_account_storage_bytes")).toBeGreaterThanOrEqual(0);
    expect(
      sampleValue(text, "humanpass_jetstream_consumer_pending_messages", { stream, consumer: DURABLE }),
    ).toBe(0);
  });

  // Without the deadline the scrape would wait for the JetStream API's minute, far past this test's 20 s.
  it("still renders when NATS stops answering on an open connection: every other series, JetStream's last answers", async () => {
    await ctx.db.transaction().execute((trx) => enqueue(trx, ctx.topology, [testEvent(1)]));
    proxy.stall();
    const text = await metrics.render();
    expect(sampleValue(text, "humanpass_outbox_pending_events")).toBe(1);
    expect(sampleValue(text, "humanpass_jetstream_stream_messages", { stream })).toBe(0);
  }, 20_000);
});
