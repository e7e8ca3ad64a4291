import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verificationUnderCallback } from "../verification-callback.ts";
import { traceSpans } from "./traces.ts";

// A callback's trace as Jaeger's query API (/api/traces/{id}) returns it: the wallet's client span is not in it,
// the verifier's server span, Fastify's handler span under it, and the worker's "verify proof" under that.
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const span = (spanID: string, operationName: string, parent: string, tags: Record<string, string>) => ({
  traceID: TRACE,
  spanID,
  operationName,
  references: [{ refType: "CHILD_OF", traceID: TRACE, spanID: parent }],
  processID: "p1",
  tags: Object.entries(tags).map(([key, value]) => ({ key, type: "string", value })),
});
const server = span("a1", "POST /api/callback", "ffffffffffffffff", { "span.kind": "server" });
const handler = span("a2", "request handler - fastify -> @fastify/otel", "a1", { "span.kind": "internal" });
const verify = span("a3", "verify proof", "a2", {
  "span.kind": "internal",
  "thread.name": "verification-worker-0",
});

let jaeger: Server;
let url = "";
let spans: unknown[] = [];
beforeAll(async () => {
  jaeger = createServer((request, response) => {
    if (request.url !== `/api/traces/${TRACE}`) return response.writeHead(404).end('{"data":null}');
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({ data: [{ traceID: TRACE, spans, processes: { p1: { serviceName: "verifier" } } }] }),
    );
  });
  await new Promise<void>((resolve) => jaeger.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(jaeger.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => jaeger.close(() => resolve())));

describe("a callback's trace read from Jaeger", () => {
  it("finds the worker's verify proof span under the callback's server span", async () => {
    spans = [server, handler, verify];
    const found = verificationUnderCallback(await traceSpans(url, TRACE));
    expect(found).toMatchObject({
      server: { name: "POST /api/callback", service: "verifier", server: true },
      verify: { name: "verify proof", thread: "verification-worker-0", parentSpanId: "a2" },
    });
  });

  it("reports it missing when the trace has no verify proof span, or it hangs under no server span", async () => {
    spans = [server, handler];
    expect(verificationUnderCallback(await traceSpans(url, TRACE))).toEqual({
      missing: 'no "verify proof" span among POST /api/callback, request handler - fastify -> @fastify/otel',
    });
    spans = [server, handler, { ...verify, references: [] }];
    expect(verificationUnderCallback(await traceSpans(url, TRACE))).toEqual({
      missing: '"verify proof" does not descend from the server span "POST /api/callback"',
    });
  });

  it("has no spans while Jaeger does not know the trace yet (404)", async () => {
    expect(await traceSpans(url, "0af7651916cd43dd8448eb211c80319c")).toEqual([]);
  });
});
