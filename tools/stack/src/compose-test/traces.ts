import type { TraceSpan } from "../verification-callback.ts";
import { INVARIANTS, type Verdict } from "./invariants.ts";

interface JaegerTrace {
  traceID: string;
  spans: {
    spanID: string;
    operationName: string;
    references?: { refType: string; spanID: string }[];
    processID: string;
    tags: { key: string; value: unknown }[];
  }[];
  processes: Record<string, { serviceName: string }>;
}

/** The spans Jaeger holds of one trace (none while it has not received them: 404). */
export async function traceSpans(jaegerUrl: string, traceId: string): Promise<TraceSpan[]> {
  const r = await fetch(`${jaegerUrl}/api/traces/${traceId}`, { signal: AbortSignal.timeout(10_000) });
  if (r.status === 404) return [];
  if (r.status !== 200) throw new Error(`Jaeger GET /api/traces/${traceId}: ${r.status}`);
  const { data } = (await r.json()) as { data: JaegerTrace[] };
  return data.flatMap((trace) =>
    trace.spans.map((s) => {
      const tag = (key: string) => s.tags.find((t) => t.key === key)?.value;
      const thread = tag("thread.name");
      return {
        spanId: s.spanID,
        parentSpanId: s.references?.find((ref) => ref.refType === "CHILD_OF")?.spanID,
        name: s.operationName,
        service: trace.processes[s.processID]?.serviceName ?? "",
        server: tag("span.kind") === "server",
        ...(typeof thread === "string" ? { thread } : {}),
      };
    }),
  );
}

/** One trace id spanning an HTTP request and NATS messaging in at least two services, read from Jaeger's API. */
export async function traces(jaegerUrl: string): Promise<Verdict> {
  const invariant = INVARIANTS.traces;
  try {
    const services = ((await fetch(`${jaegerUrl}/api/services`).then((r) => r.json())) as { data: string[] })
      .data;
    for (const service of services) {
      const { data } = (await fetch(
        `${jaegerUrl}/api/traces?service=${encodeURIComponent(service)}&limit=200`,
      ).then((r) => r.json())) as { data: JaegerTrace[] };
      for (const trace of data) {
        const names = new Set(trace.spans.map((s) => trace.processes[s.processID]?.serviceName));
        const kinds = new Set(trace.spans.map((s) => s.tags.find((t) => t.key === "span.kind")?.value));
        if (names.size >= 2 && kinds.has("server") && (kinds.has("producer") || kinds.has("consumer")))
          return {
            invariant,
            ok: true,
            detail: `trace ${trace.traceID}: ${[...names].join(" → ")} (${trace.spans.length} spans); ${services.length} services reported`,
          };
      }
    }
    return {
      invariant,
      ok: false,
      detail: `no such trace; services reported: ${services.join(", ") || "none"}`,
    };
  } catch (error) {
    return { invariant, ok: false, detail: `Jaeger API at ${jaegerUrl}: ${(error as Error).message}` };
  }
}
