import { Writable } from "node:stream";
import { createLogger, createMetrics, startTelemetry } from "@humanpass/telemetry";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpApp, type HttpApp } from "./app.ts";

const exporter = new InMemorySpanExporter();
// Before the app: its server and Fastify itself are instrumented from here on.
const telemetry = startTelemetry({
  serviceName: "probe-test",
  serviceVersion: "9.8.7",
  deploymentEnvironment: "test-env",
  spanExporter: exporter,
});
const lines: Array<Record<string, unknown>> = [];
const logger = createLogger({
  name: "probe-test",
  level: "info",
  destination: new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  }),
});
let app: HttpApp;
let url: string;

beforeAll(async () => {
  app = await createHttpApp({
    logger,
    rateLimit: false,
    metrics: createMetrics({ serviceName: "probe-test" }),
  });
  app.get("/work", async () => ({ ok: true }));
  url = await app.listen({ port: 0, host: "127.0.0.1" });
});

afterAll(async () => {
  await app.close();
  await telemetry.shutdown();
});

describe("probes and scrapes", () => {
  it("are neither traced nor logged at info; other requests are, with service.version and deployment.environment", async () => {
    lines.length = 0;
    exporter.reset();
    for (const path of ["/healthz", "/readyz", "/metrics"])
      expect((await fetch(`${url}${path}`)).status).toBe(200);
    expect((await fetch(`${url}/work`)).status).toBe(200);

    // The server's spans: the test's own fetch calls are traced by the client instrumentation.
    const spans = exporter
      .getFinishedSpans()
      .filter((s) => s.instrumentationScope.name !== "@opentelemetry/instrumentation-undici");
    const served = (path: string) => spans.filter((s) => JSON.stringify(s.attributes).includes(path));
    expect(served("/work").length).toBeGreaterThan(0);
    for (const path of ["/healthz", "/readyz", "/metrics"]) expect(served(path)).toEqual([]);
    for (const span of spans) {
      expect(span.resource.attributes).toMatchObject({
        "service.name": "probe-test",
        "service.version": "9.8.7",
        "deployment.environment": "test-env",
      });
    }

    const logged = (path: string) => lines.filter((l) => JSON.stringify(l).includes(path));
    expect(logged("/work").length).toBeGreaterThan(0);
    for (const path of ["/healthz", "/readyz", "/metrics"]) expect(logged(path)).toEqual([]);
  });
});
