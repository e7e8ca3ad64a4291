// A stand-in for the OpenTelemetry collector and Jaeger where neither image can be pulled. It accepts OTLP/HTTP
// JSON traces on :4318 (what the services' exporter sends), forwards each batch to OTLP_FORWARD_URL when set (the
// collector role), keeps the newest MAX_SPANS spans in memory and answers the part of Jaeger's query API that
// tools read: GET /api/services, GET /api/traces?service=NAME[&limit=N] and GET /api/traces/{id} on :16686. No UI.
import http from "node:http";

const MAX_SPANS = Number(process.env.MAX_SPANS ?? 200_000);
const forwardUrl = process.env.OTLP_FORWARD_URL?.replace(/\/$/, "");
const KINDS = ["unspecified", "internal", "server", "client", "producer", "consumer"];
/** @type {{service: string, traceID: string, spanID: string, parentSpanID?: string, operationName: string, startTime: number, duration: number, tags: {key: string, type: string, value: unknown}[]}[]} */
let spans = [];

const log = (msg, fields = {}) =>
  process.stdout.write(
    `${JSON.stringify({ time: new Date().toISOString(), name: "otlp-receiver", msg, ...fields })}\n`,
  );

const value = (v) => v?.stringValue ?? v?.intValue ?? v?.boolValue ?? v?.doubleValue ?? null;
const micros = (nanos) => Math.floor(Number(BigInt(nanos ?? 0) / 1000n));

function record(body) {
  let count = 0;
  for (const rs of body.resourceSpans ?? []) {
    const service =
      (rs.resource?.attributes ?? []).find((a) => a.key === "service.name")?.value?.stringValue ?? "unknown";
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const start = micros(s.startTimeUnixNano);
        spans.push({
          service,
          traceID: s.traceId,
          spanID: s.spanId,
          parentSpanID: s.parentSpanId || undefined,
          operationName: s.name,
          startTime: start,
          duration: micros(s.endTimeUnixNano) - start,
          tags: [
            { key: "span.kind", type: "string", value: KINDS[s.kind ?? 0] ?? "unspecified" },
            ...(s.attributes ?? []).map((a) => ({
              key: a.key,
              type: "string",
              value: String(value(a.value)),
            })),
          ],
        });
        count++;
      }
    }
  }
  if (spans.length > MAX_SPANS) spans = spans.slice(spans.length - MAX_SPANS);
  return count;
}

function traces(service, limit) {
  const ids = [];
  for (let i = spans.length - 1; i >= 0 && ids.length < limit; i--) {
    const s = spans[i];
    if (s.service === service && !ids.includes(s.traceID)) ids.push(s.traceID);
  }
  return ids.map(trace);
}

function trace(traceID) {
  const members = spans.filter((s) => s.traceID === traceID);
  const processes = {};
  const processOf = new Map();
  for (const s of members) {
    if (!processOf.has(s.service)) {
      const id = `p${processOf.size + 1}`;
      processOf.set(s.service, id);
      processes[id] = { serviceName: s.service, tags: [] };
    }
  }
  return {
    traceID,
    spans: members.map(({ service, parentSpanID, ...s }) => ({
      ...s,
      references: parentSpanID ? [{ refType: "CHILD_OF", traceID, spanID: parentSpanID }] : [],
      processID: processOf.get(service),
    })),
    processes,
  };
}

const json = (res, status, body) =>
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

async function forward(raw) {
  try {
    await fetch(`${forwardUrl}/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: raw,
    });
  } catch (error) {
    log("forwarding failed", { error: String(error) });
  }
}

function handle(req, res) {
  const url = new URL(req.url ?? "/", "http://receiver");
  if (req.method === "POST" && url.pathname === "/v1/traces") {
    if (!(req.headers["content-type"] ?? "").includes("json"))
      return json(res, 415, { error: "only OTLP/HTTP JSON" });
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      try {
        record(JSON.parse(raw.toString("utf8")));
      } catch {
        return json(res, 400, { error: "invalid JSON" });
      }
      if (forwardUrl) void forward(raw);
      json(res, 200, {});
    });
    return;
  }
  if (req.method === "GET" && url.pathname === "/api/services")
    return json(res, 200, { data: [...new Set(spans.map((s) => s.service))].sort() });
  if (req.method === "GET" && url.pathname === "/api/traces") {
    const service = url.searchParams.get("service");
    if (!service) return json(res, 400, { errors: [{ code: 400, msg: "parameter 'service' is required" }] });
    return json(res, 200, { data: traces(service, Number(url.searchParams.get("limit") ?? 20)) });
  }
  const byId = req.method === "GET" && url.pathname.match(/^\/api\/traces\/([0-9a-f]{32})$/);
  if (byId) {
    const found = trace(byId[1]);
    return found.spans.length > 0
      ? json(res, 200, { data: [found] })
      : json(res, 404, { data: null, errors: [{ code: 404, msg: "trace not found" }] });
  }
  if (url.pathname === "/" || url.pathname === "/healthz")
    return json(res, 200, { status: "ok", spans: spans.length });
  json(res, 404, { error: "not found" });
}

const servers = [4318, 16686].map((port) => http.createServer(handle).listen(port, "0.0.0.0"));
log("listening", { otlp: 4318, query: 16686, forward: forwardUrl ?? null });
for (const signal of ["SIGINT", "SIGTERM"])
  process.once(signal, () => {
    for (const s of servers) s.close();
    process.exit(0);
  });
