import { createNoopMeter, type Meter } from "@opentelemetry/api";
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { observeRuntime } from "./runtime-metrics.ts";

export interface MetricsOptions {
  serviceName: string;
  serviceVersion?: string;
  deploymentEnvironment?: string;
  /** `false` gives a meter that records nothing and an empty exposition (METRICS_ENABLED=false, the benchmark's "off"). */
  enabled?: boolean;
}

/** One service's instruments and their Prometheus exposition. */
export interface ServiceMetrics {
  readonly enabled: boolean;
  /** Where the service and its libraries create their instruments. */
  readonly meter: Meter;
  /** The Prometheus text format of every instrument, read now. */
  render(): Promise<string>;
  shutdown(): Promise<void>;
}

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * A meter provider of its own per service instance rather than the global one: a test process builds many apps,
 * each must expose only its own series and count from zero, and no instrument may outlive the app that made it.
 * A process runs one service, so production has one provider all the same. The Prometheus exporter is a pull
 * reader whose HTTP server is not started: the service's own Fastify app serves `/metrics`.
 */
export function createMetrics(options: MetricsOptions): ServiceMetrics {
  if (options.enabled === false) {
    return {
      enabled: false,
      meter: createNoopMeter(),
      render: async () => "",
      shutdown: async () => {},
    };
  }
  const reader = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({
    resource: resourceFromAttributes(resourceAttributes(options)),
    readers: [reader],
  });
  // service.name on every series, so one expression tells the services apart whatever the scrape job is called;
  // service.version and deployment.environment too, so a rollout's two releases can be compared series by series
  // (the dashboard's `service_version` variable) without joining on target_info.
  const serializer = new PrometheusSerializer(
    "",
    false,
    /^(service\.name|service\.version|deployment\.environment)$/,
  );
  const meter = provider.getMeter("@humanpass/telemetry");
  const stopRuntime = observeRuntime(meter);
  return {
    enabled: true,
    meter,
    async render() {
      const { resourceMetrics } = await reader.collect();
      return serializer.serialize(resourceMetrics);
    },
    shutdown: async () => {
      stopRuntime();
      await provider.shutdown();
    },
  };
}

/** The resource attributes of a service's spans and metrics. */
export function resourceAttributes(options: {
  serviceName: string;
  serviceVersion?: string;
  deploymentEnvironment?: string;
}): Record<string, string> {
  return {
    "service.name": options.serviceName,
    ...(options.serviceVersion ? { "service.version": options.serviceVersion } : {}),
    ...(options.deploymentEnvironment ? { "deployment.environment": options.deploymentEnvironment } : {}),
  };
}

/** Bucket boundaries (seconds) the HTTP semantic conventions advise for `http.server.request.duration`. */
export const DURATION_BUCKETS_SECONDS = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];
