// What the soak reads from each service's /metrics every few seconds: the runtime series of @humanpass/telemetry
// and the pg pool's gauges of @humanpass/db (docs/metrics.md).
import { parseExposition, sumOf } from "@humanpass/testing/prometheus";

export interface ServiceSample {
  rssBytes: number;
  heapUsedBytes: number;
  /** p99 of the event loop's delay since the previous scrape; absent before the loop has a sample. */
  eventLoopP99Ms?: number;
  poolUsed: number;
  poolIdle: number;
  /** Queries waiting for a pool connection. */
  poolPending: number;
  poolMax: number;
  fds: number;
  /** Timers keeping the event loop alive (`nodejs_active_resources{nodejs_resource_type="Timeout"}`). */
  timers: number;
}

export interface Tick {
  /** Seconds since the load started. */
  t: number;
  /** Per service; a service whose /metrics did not answer has no entry. */
  services: Record<string, ServiceSample>;
}

/** The soak's figures from one Prometheus exposition; throws when a series it needs is missing. */
export function readServiceSample(text: string): ServiceSample {
  const samples = parseExposition(text);
  const need = (name: string, labels: Record<string, string> = {}) => {
    const value = sumOf(samples, name, labels);
    if (value === undefined) throw new Error(`no ${name} ${JSON.stringify(labels)} in /metrics`);
    return value;
  };
  const delay = sumOf(samples, "nodejs_eventloop_delay_p99");
  // A resource type with none is absent, but the series is there whenever the process holds anything (it listens).
  need("nodejs_active_resources");
  const timers = sumOf(samples, "nodejs_active_resources", { nodejs_resource_type: "Timeout" }) ?? 0;
  return {
    rssBytes: need("process_memory_usage"),
    heapUsedBytes: need("v8js_memory_heap_used"),
    ...(delay === undefined ? {} : { eventLoopP99Ms: delay * 1000 }),
    poolUsed: need("db_client_connection_count", { db_client_connection_state: "used" }),
    poolIdle: need("db_client_connection_count", { db_client_connection_state: "idle" }),
    poolPending: need("db_client_connection_pending_requests"),
    poolMax: need("db_client_connection_max"),
    fds: need("process_open_file_descriptor_count"),
    timers,
  };
}

/** One scrape of every service, side by side; a service that does not answer in 5 s is left out of the tick. */
export async function sampleServices(urls: Record<string, string>, t: number): Promise<Tick> {
  const entries = await Promise.all(
    Object.entries(urls).map(async ([name, url]) => {
      try {
        const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) });
        return [name, readServiceSample(await response.text())] as const;
      } catch {
        return undefined;
      }
    }),
  );
  return { t, services: Object.fromEntries(entries.filter((e) => e !== undefined)) };
}
