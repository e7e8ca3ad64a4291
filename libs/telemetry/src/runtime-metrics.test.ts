import { closeSync, openSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createMetrics } from "./metrics.ts";

/** The samples of one series name in a Prometheus exposition, by their label text. */
function samples(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = line.match(/^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)/);
    if (m?.[1] === name) out.set(m[2] ?? "", Number(m[3]));
  }
  return out;
}
const one = (text: string, name: string) => [...samples(text, name).values()][0];

describe("the runtime series every service exposes", () => {
  it("reports resident memory, V8 heap used per space, event-loop delay and open file descriptors", async () => {
    const metrics = createMetrics({ serviceName: "runtime-test" });
    try {
      // The event-loop histogram samples every 10 ms: a few of its periods, so the delay series has samples.
      await sleep(100);
      const text = await metrics.render();
      expect(one(text, "process_memory_usage")).toBeGreaterThan(0);
      const heap = samples(text, "v8js_memory_heap_used");
      const spaces = [...heap.keys()].map((labels) => labels.match(/v8js_heap_space_name="([^"]+)"/)?.[1]);
      expect(spaces).toEqual(expect.arrayContaining(["new_space", "old_space"]));
      expect([...heap.values()].every((v) => v >= 0)).toBe(true);
      expect(samples(text, "nodejs_eventloop_delay_p99").size).toBe(1);
      expect(one(text, "nodejs_eventloop_delay_max")).toBeGreaterThanOrEqual(0);

      const before = one(await metrics.render(), "process_open_file_descriptor_count")!;
      const fd = openSync(import.meta.filename, "r");
      try {
        expect(one(await metrics.render(), "process_open_file_descriptor_count")).toBe(before + 1);
      } finally {
        closeSync(fd);
      }
      expect(one(await metrics.render(), "process_open_file_descriptor_count")).toBe(before);
    } finally {
      await metrics.shutdown();
    }
  });

  it("counts the timers and other resources keeping the event loop alive, by type", async () => {
    const metrics = createMetrics({ serviceName: "runtime-test" });
    const timers = async () =>
      [...samples(await metrics.render(), "nodejs_active_resources")].find(([labels]) =>
        labels.includes('nodejs_resource_type="Timeout"'),
      )?.[1] ?? 0;
    try {
      const before = await timers();
      const interval = setInterval(() => {}, 60_000);
      try {
        expect(await timers()).toBe(before + 1);
      } finally {
        clearInterval(interval);
      }
      expect(await timers()).toBe(before);
    } finally {
      await metrics.shutdown();
    }
  });

  it("reports nothing when metrics are off", async () => {
    const metrics = createMetrics({ serviceName: "runtime-test", enabled: false });
    expect(await metrics.render()).toBe("");
  });
});
