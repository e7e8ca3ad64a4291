import { describe, expect, it } from "vitest";
import { judge, LEAK_CHECKS, leaks, p99PerMinute, SLACK, trend } from "./analysis.ts";
import type { ServiceSample, Tick } from "./sampler.ts";

const MIB = 2 ** 20;
const steady: ServiceSample = {
  rssBytes: 100 * MIB,
  heapUsedBytes: 40 * MIB,
  eventLoopP99Ms: 12,
  poolUsed: 2,
  poolIdle: 3,
  poolPending: 0,
  poolMax: 10,
  fds: 30,
  timers: 12,
};

/** A tick every 10 s for `minutes`, the service's sample at second t given by `at`. */
function run(minutes: number, at: (t: number) => Partial<ServiceSample>): Tick[] {
  return Array.from({ length: minutes * 6 + 1 }, (_, i) => ({
    t: i * 10,
    services: { api: { ...steady, ...at(i * 10) } },
  }));
}

const rest = (sample: Partial<ServiceSample> = {}): Tick[] =>
  [0, 1, 2].map((i) => ({ t: 1000 + i, services: { api: { ...steady, poolUsed: 0, ...sample } } }));

const verdict = (verdicts: { invariant: string; ok: boolean }[], check: string) =>
  verdicts.find((v) => v.invariant === `api: ${check}`)?.ok;

describe("soak analysis", () => {
  it("reads growth from the median of the minute before the warm-up's end to that of the last minute", () => {
    // RSS climbs by 1 MiB a minute: 105 MiB at the end of a 5-minute warm-up, 130 at minute 30.
    const ticks = run(30, (t) => ({ rssBytes: (100 + t / 60) * MIB }));
    const rss = trend(ticks, "api", "rss", 300);
    expect(rss?.atWarmup).toBeCloseTo(104.58, 1);
    expect(rss?.atEnd).toBeCloseTo(129.58, 1);
    expect(rss?.growthPct).toBeCloseTo(23.9, 1);
    expect(rss?.max).toBe(130);
    const verdicts = judge(ticks, new Map(), ["api"], 300);
    expect(verdicts.find((v) => v.invariant.startsWith("api RSS"))?.ok).toBe(false);
    expect(verdicts.find((v) => v.invariant.startsWith("api heap"))?.ok).toBe(true);
  });

  it("takes one garbage-collection dip for noise, not for a trend", () => {
    const ticks = run(10, (t) => (t === 600 ? { heapUsedBytes: 20 * MIB } : {}));
    expect(trend(ticks, "api", "heap", 300)?.growthPct).toBe(0);
  });

  it("buckets responses by minute and service and takes each minute's p99", () => {
    const start = 1_000_000;
    const responses = [
      ...Array.from({ length: 100 }, (_, i) => ({ service: "api", at: start + i * 100, ms: i + 1 })),
      { service: "api", at: start + 125_000, ms: 7 },
      { service: "gateway", at: start + 61_000, ms: 40 },
      { service: "api", at: start - 1, ms: 1_000 },
    ];
    const minutes = p99PerMinute(responses, start);
    expect(minutes.get("api")).toEqual([100, undefined, 7]);
    expect(minutes.get("gateway")).toEqual([undefined, 40]);
  });

  it("judges p99 flat unless the last third of the minutes is well above the first", () => {
    const flat = new Map([["api", [50, 20, 21, 19, 22, 20, 23, 21, 20, 24]]]);
    const rising = new Map([["api", [50, 20, 22, 24, 40, 50, 60, 80, 90, 100]]]);
    const p99 = (m: Map<string, number[]>) =>
      judge([], m, [], 60).find((v) => v.invariant.includes("p99"))?.ok;
    expect(p99(flat)).toBe(true);
    expect(p99(rising)).toBe(false);
  });

  it("passes a steady service's leak checks", () => {
    const verdicts = leaks(
      run(3, () => ({})),
      rest(),
      ["api"],
      60,
    );
    expect(verdicts.map((v) => v.ok)).toEqual([true, true, true, true]);
  });

  it("fails a pool whose connections stay checked out at rest, or whose queries wait", () => {
    const ticks = run(3, () => ({}));
    expect(verdict(leaks(ticks, rest({ poolUsed: 1 }), ["api"], 60), LEAK_CHECKS.poolAtRest)).toBe(false);
    expect(verdict(leaks(ticks, rest({ poolPending: 2 }), ["api"], 60), LEAK_CHECKS.poolAtRest)).toBe(false);
    // A connection in use at one rest sample but not at another is a query in flight, not a leak.
    const flicker = rest();
    flicker[0]!.services.api!.poolUsed = 1;
    expect(verdict(leaks(ticks, flicker, ["api"], 60), LEAK_CHECKS.poolAtRest)).toBe(true);
  });

  it("fails a pool that ever holds more than its max", () => {
    const ticks = run(3, (t) => (t === 90 ? { poolUsed: 10, poolIdle: 1 } : {}));
    expect(verdict(leaks(ticks, rest(), ["api"], 60), LEAK_CHECKS.poolMax)).toBe(false);
  });

  it("fails file descriptors that climb past the slack, under load or at rest", () => {
    const climbing = run(3, (t) => ({ fds: 30 + Math.floor(t / 4) }));
    expect(verdict(leaks(climbing, rest({ fds: 30 }), ["api"], 60), LEAK_CHECKS.fds)).toBe(false);
    const steadyTicks = run(3, () => ({}));
    expect(verdict(leaks(steadyTicks, rest({ fds: 30 + SLACK.fds + 1 }), ["api"], 60), LEAK_CHECKS.fds)).toBe(
      false,
    );
    expect(verdict(leaks(steadyTicks, rest({ fds: 30 + SLACK.fds }), ["api"], 60), LEAK_CHECKS.fds)).toBe(
      true,
    );
  });

  it("fails timers that pile up: one a second that nobody clears", () => {
    const piling = run(3, (t) => ({ timers: 12 + t }));
    expect(verdict(leaks(piling, rest({ timers: 12 + 200 }), ["api"], 60), LEAK_CHECKS.timers)).toBe(false);
    expect(
      verdict(
        leaks(
          run(3, () => ({})),
          rest(),
          ["api"],
          60,
        ),
        LEAK_CHECKS.timers,
      ),
    ).toBe(true);
  });
});
