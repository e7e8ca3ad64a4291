import { createRequire } from "node:module";
import { FastifyOtelInstrumentation } from "@fastify/otel";
import { context } from "@opentelemetry/api";
import { suppressTracing } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { registerInstrumentations } from "@opentelemetry/instrumentation";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { PinoInstrumentation } from "@opentelemetry/instrumentation-pino";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { resourceAttributes } from "./metrics.ts";

/** Probes and scrapes: neither traced nor logged at info (they come every few seconds from every prober). */
export const PROBE_PATHS = ["/healthz", "/readyz", "/metrics"] as const;

const isProbe = (url: string | undefined) =>
  url !== undefined && (PROBE_PATHS as readonly string[]).includes(url.split("?")[0] ?? "");

export interface TelemetryOptions {
  serviceName: string;
  /** Resource attribute `service.version` of every span. */
  serviceVersion?: string;
  /** Resource attribute `deployment.environment` of every span. */
  deploymentEnvironment?: string;
  /** OTLP/HTTP endpoint; traces are exported only when one is given (OTEL_EXPORTER_OTLP_ENDPOINT). */
  otlpEndpoint?: string;
  /** For tests: an exporter that receives every span at once (e.g. InMemorySpanExporter). */
  spanExporter?: SpanExporter;
}

export interface Telemetry {
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry for a process: HTTP, undici (fetch), pg, pino and Fastify instrumentation, W3C trace context.
 * Call it before the instrumented modules are used (first thing in main.ts).
 *
 * Sampling is the SDK's own reading of the standard OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG
 * (default `parentbased_always_on`); e.g. `parentbased_traceidratio` with `0.1` keeps a tenth of the new traces
 * and follows the caller's decision for the others.
 */
export function startTelemetry(options: TelemetryOptions): Telemetry {
  const spanProcessors: SpanProcessor[] = [];
  if (options.spanExporter) spanProcessors.push(new SimpleSpanProcessor(options.spanExporter));
  if (options.otlpEndpoint) {
    const url = options.otlpEndpoint.replace(/\/$/, "");
    spanProcessors.push(
      new BatchSpanProcessor(
        new OTLPTraceExporter({ url: url.endsWith("/v1/traces") ? url : `${url}/v1/traces` }),
      ),
    );
  }
  // The tracer provider and instrumentations alone, not NodeSDK: NodeSDK loads every exporter it could be
  // configured with (gRPC, Prometheus, Zipkin…), which doubled a service's start-up for code it never runs.
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes(resourceAttributes(options)),
    spanProcessors,
  });
  provider.register();
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (request) => isProbe(request.url) }),
      new UndiciInstrumentation(),
      new PgInstrumentation(),
      new PinoInstrumentation({ disableLogSending: true }),
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        ignorePaths: (route: { url: string }) => isProbe(route.url),
      }),
    ],
  });
  if (spanProcessors.length > 0) {
    // Services import Fastify (and with it node:http) before main.ts starts telemetry. The instrumentation patches
    // a module when it is next required, so require it now: every server created from here on gets server spans.
    const require = createRequire(import.meta.url);
    require("node:http");
    require("node:https");
  }
  return {
    shutdown: async () => {
      unregister();
      await provider.shutdown();
    },
  };
}

/** Runs `fn` with tracing suppressed: routine calls (an idle poll) that would each start a trace of their own. */
export function untraced<T>(fn: () => T): T {
  return context.with(suppressTracing(context.active()), fn);
}
