import { Writable } from "node:stream";
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { afterAll, expect, it } from "vitest";
import { createLogger } from "./logger.ts";
import { startTelemetry } from "./sdk.ts";

const telemetry = startTelemetry({ serviceName: "logger-test", spanExporter: new InMemorySpanExporter() });
afterAll(() => telemetry.shutdown());

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, logger: createLogger({ name: "svc", destination }) };
}

it("puts the active trace and span ids on every line logged inside a span", async () => {
  const { lines, logger } = capture();
  const ids = trace.getTracer("t").startActiveSpan("work", (span) => {
    logger.info("inside");
    span.end();
    return span.spanContext();
  });
  logger.info("outside");
  await new Promise((r) => setImmediate(r));
  expect(lines[0]).toMatchObject({ msg: "inside", name: "svc", trace_id: ids.traceId, span_id: ids.spanId });
  expect(lines[1]).toMatchObject({ msg: "outside" });
  expect(lines[1]).not.toHaveProperty("trace_id");
});

it("never writes secrets it is handed", async () => {
  const { lines, logger } = capture();
  logger.info(
    { wallet: { privateKey: "0xdead" }, req: { headers: { authorization: "Bearer x" } } },
    "with secrets",
  );
  await new Promise((r) => setImmediate(r));
  expect(JSON.stringify(lines[0])).not.toMatch(/0xdead|Bearer/);
});
