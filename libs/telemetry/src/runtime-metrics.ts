import { readdirSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { getHeapSpaceStatistics } from "node:v8";
import type { Meter } from "@opentelemetry/api";

/**
 * The process's own health, read from Node's platform APIs at collection time, under the OpenTelemetry semantic
 * conventions' names: resident memory, V8 heap used per space, the event loop's delay (p99 and max since the last
 * collection, from `monitorEventLoopDelay`) and open file descriptors (Linux: `/proc/self/fd`; absent elsewhere);
 * besides them, not a semantic convention, what keeps the event loop alive by type (timers, sockets, servers), where
 * a leak of timers or connections shows first. Returns a stop function for the event-loop histogram.
 */
export function observeRuntime(meter: Meter): () => void {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const rss = meter.createObservableGauge("process.memory.usage", {
    description: "Resident set size of the process",
    unit: "By",
  });
  const heap = meter.createObservableGauge("v8js.memory.heap.used", {
    description: "V8 heap used, by heap space",
    unit: "By",
  });
  const delayP99 = meter.createObservableGauge("nodejs.eventloop.delay.p99", {
    description: "99th percentile of the event loop's delay since the last collection",
    unit: "s",
  });
  const delayMax = meter.createObservableGauge("nodejs.eventloop.delay.max", {
    description: "Longest event loop delay since the last collection",
    unit: "s",
  });
  const fds = meter.createObservableGauge("process.open_file_descriptor.count", {
    description: "File descriptors the process holds open (Linux only)",
    unit: "{file_descriptor}",
  });
  const resources = meter.createObservableGauge("nodejs.active_resources", {
    description:
      "Handles, requests and timers keeping the event loop alive, by type (process.getActiveResourcesInfo)",
    unit: "{resource}",
  });
  meter.addBatchObservableCallback(
    (result) => {
      result.observe(rss, process.memoryUsage.rss());
      for (const space of getHeapSpaceStatistics())
        result.observe(heap, space.space_used_size, { "v8js.heap.space.name": space.space_name });
      // The histogram is in nanoseconds; with no sample yet (a collection right after start) it reads NaN/0.
      if (delay.count > 0) {
        result.observe(delayP99, delay.percentile(99) / 1e9);
        result.observe(delayMax, delay.max / 1e9);
      }
      delay.reset();
      const open = openFileDescriptors();
      if (open !== undefined) result.observe(fds, open);
      const byType = new Map<string, number>();
      for (const type of process.getActiveResourcesInfo()) byType.set(type, (byType.get(type) ?? 0) + 1);
      for (const [type, count] of byType) result.observe(resources, count, { "nodejs.resource.type": type });
    },
    [rss, heap, delayP99, delayMax, fds, resources],
  );
  return () => delay.disable();
}

function openFileDescriptors(): number | undefined {
  try {
    // The directory's own descriptor, opened for the listing, is one of the entries.
    return readdirSync("/proc/self/fd").length - 1;
  } catch {
    return undefined;
  }
}
