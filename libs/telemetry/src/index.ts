export type { Counter, Gauge, Histogram, Meter, UpDownCounter } from "@opentelemetry/api";
export { routeConsoleTo } from "./console.ts";
export { createLogger, type Logger, type LoggerConfig } from "./logger.ts";
export {
  createMetrics,
  DURATION_BUCKETS_SECONDS,
  type MetricsOptions,
  PROMETHEUS_CONTENT_TYPE,
  resourceAttributes,
  type ServiceMetrics,
} from "./metrics.ts";
export { PROBE_PATHS, startTelemetry, type Telemetry, type TelemetryOptions, untraced } from "./sdk.ts";
