// What a soak's samples say: each series' value at the end of the warm-up and at the end of the run, the requests'
// p99 minute by minute, and the verdicts drawn from them (the benchmark's judgement of growth and latency, and the
// leak checks the CI soak asserts).
import type { Verdict } from "../compose-test/invariants.ts";
import type { ServiceSample, Tick } from "./sampler.ts";

/** The series a soak follows per service, with how each reads off a sample and prints. */
export const SERIES = {
  rss: { label: "RSS (MiB)", of: (s: ServiceSample) => s.rssBytes / 2 ** 20 },
  heap: { label: "heap used (MiB)", of: (s: ServiceSample) => s.heapUsedBytes / 2 ** 20 },
  eventLoopP99: { label: "event-loop p99 (ms)", of: (s: ServiceSample) => s.eventLoopP99Ms },
  pool: { label: "pool connections", of: (s: ServiceSample) => s.poolUsed + s.poolIdle },
  fds: { label: "open fds", of: (s: ServiceSample) => s.fds },
  timers: { label: "timers", of: (s: ServiceSample) => s.timers },
} as const;
export type SeriesName = keyof typeof SERIES;

/** Growth from the end of the warm-up to the end that the benchmark accepts, in %. */
export const GROWTH_LIMIT_PCT = 10;
/**
 * What a service may hold beyond its figure at the end of the warm-up: connections come and go with the load, and
 * each brings its timers (keep-alive, idle timeouts).
 */
export const SLACK = { fds: 20, timers: 20 } as const;
/** The leak checks, each verdict's name after the service's. */
export const LEAK_CHECKS = {
  poolMax: "pool connections ≤ the pool's max at every sample",
  poolAtRest: "at rest, no pool connection checked out and no query waiting",
  fds: `open fds within ${SLACK.fds} of the warm-up's end, under load and at rest`,
  timers: `timers within ${SLACK.timers} of the warm-up's end, under load and at rest`,
} as const;
/** The width of the windows whose median is "the value at" a moment: one sample is one point of a GC sawtooth. */
const WINDOW_S = 60;

export interface Trend {
  atWarmup: number;
  atEnd: number;
  growthPct: number;
  /** Largest sample after the warm-up. */
  max: number;
}

/** One recorded HTTP response: the service it went to, when it was sent (ms since the epoch), how long it took. */
export interface Timed {
  service: string;
  at: number;
  ms: number;
}

function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function p99(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))];
}

function valuesIn(ticks: Tick[], service: string, series: SeriesName, from: number, to: number): number[] {
  return ticks
    .filter((tick) => tick.t > from && tick.t <= to && tick.services[service])
    .map((tick) => SERIES[series].of(tick.services[service]!))
    .filter((v): v is number => v !== undefined);
}

/** The series' median over the minute before the warm-up ended and over the run's last minute, and its max after. */
export function trend(
  ticks: Tick[],
  service: string,
  series: SeriesName,
  warmupS: number,
): Trend | undefined {
  const end = ticks.at(-1)?.t ?? 0;
  const atWarmup = median(valuesIn(ticks, service, series, warmupS - WINDOW_S, warmupS));
  const atEnd = median(valuesIn(ticks, service, series, end - WINDOW_S, end));
  const after = valuesIn(ticks, service, series, warmupS, end);
  if (atWarmup === undefined || atEnd === undefined || after.length === 0) return undefined;
  return { atWarmup, atEnd, growthPct: ((atEnd - atWarmup) / atWarmup) * 100, max: Math.max(...after) };
}

/** Per service, the p99 of its responses' durations (ms) in each minute since `startMs` (undefined: none then). */
export function p99PerMinute(responses: Timed[], startMs: number): Map<string, (number | undefined)[]> {
  const buckets = new Map<string, number[][]>();
  for (const r of responses) {
    const minute = Math.floor((r.at - startMs) / 60_000);
    if (minute < 0) continue;
    const rows = buckets.get(r.service) ?? [];
    const row = rows[minute] ?? [];
    row.push(r.ms);
    rows[minute] = row;
    buckets.set(r.service, rows);
  }
  return new Map([...buckets].map(([service, rows]) => [service, Array.from(rows, (row) => p99(row ?? []))]));
}

/**
 * The benchmark's judgement, per service: RSS and heap grew by at most GROWTH_LIMIT_PCT after the warm-up, and
 * the requests' p99 stayed flat within noise: the median per-minute p99 of the last third of the minutes after the
 * warm-up is at most 1.5 times (plus 10 ms) that of the first third.
 */
export function judge(
  ticks: Tick[],
  minutes: Map<string, (number | undefined)[]>,
  services: readonly string[],
  warmupS: number,
): Verdict[] {
  const verdicts: Verdict[] = [];
  for (const service of services) {
    for (const series of ["rss", "heap"] as const) {
      const t = trend(ticks, service, series, warmupS);
      verdicts.push({
        invariant: `${service} ${SERIES[series].label} grows ≤ ${GROWTH_LIMIT_PCT} % after the warm-up`,
        ok: t !== undefined && t.growthPct <= GROWTH_LIMIT_PCT,
        detail: t
          ? `${t.atWarmup.toFixed(1)} → ${t.atEnd.toFixed(1)} (${t.growthPct.toFixed(1)} %), max ${t.max.toFixed(1)}`
          : "no samples",
      });
    }
  }
  const firstMinute = Math.ceil(warmupS / 60);
  for (const [service, perMinute] of minutes) {
    const after = perMinute.slice(firstMinute).filter((v): v is number => v !== undefined);
    const third = Math.floor(after.length / 3);
    const first = median(after.slice(0, third));
    const last = median(after.slice(after.length - third));
    verdicts.push({
      invariant: `${service} request p99 flat within noise after the warm-up`,
      ok: first !== undefined && last !== undefined && last <= first * 1.5 + 10,
      detail:
        first !== undefined && last !== undefined
          ? `median per-minute p99 ${first.toFixed(0)} ms in the first third, ${last.toFixed(0)} ms in the last`
          : "too few minutes after the warm-up",
    });
  }
  return verdicts;
}

/** The series at the end of the load and at rest stays within its slack of its figure at the end of the warm-up. */
function withinSlack(
  ticks: Tick[],
  rest: Tick[],
  service: string,
  series: keyof typeof SLACK,
  warmupS: number,
): Verdict {
  const t = trend(ticks, service, series, warmupS);
  const resting = rest.map((tick) => tick.services[service]).filter((s) => s !== undefined);
  const atRest = Math.min(...resting.map((s) => SERIES[series].of(s)));
  const bound = (t?.atWarmup ?? 0) + SLACK[series];
  return {
    invariant: `${service}: ${LEAK_CHECKS[series]}`,
    ok: t !== undefined && resting.length > 0 && t.atEnd <= bound && atRest <= bound,
    detail: t
      ? `${t.atWarmup} at the warm-up's end, ${t.atEnd} at the end, ${atRest} at rest, max ${t.max}`
      : "no samples",
  };
}

/**
 * What a leak would break, per service, whatever the machine's speed: the pool never holds more connections than
 * its max; once the load has stopped and the system settled (`rest`), no pool connection stays checked out and no
 * query waits for one; and open file descriptors and timers, at the end of the load and at rest, stay within their
 * SLACK of their figure at the end of the warm-up.
 */
export function leaks(ticks: Tick[], rest: Tick[], services: readonly string[], warmupS: number): Verdict[] {
  return services.flatMap((service) => {
    const samples = ticks.map((t) => t.services[service]).filter((s) => s !== undefined);
    const resting = rest.map((t) => t.services[service]).filter((s) => s !== undefined);
    const over = samples.filter((s) => s.poolUsed + s.poolIdle > s.poolMax);
    const most = Math.max(...samples.map((s) => s.poolUsed + s.poolIdle));
    const stillUsed = Math.min(...resting.map((s) => s.poolUsed));
    const waiting = Math.min(...resting.map((s) => s.poolPending));
    return [
      {
        invariant: `${service}: ${LEAK_CHECKS.poolMax}`,
        ok: samples.length > 0 && over.length === 0,
        detail: `${samples.length} samples, at most ${most} of ${samples[0]?.poolMax} open`,
      },
      {
        invariant: `${service}: ${LEAK_CHECKS.poolAtRest}`,
        ok: resting.length > 0 && stillUsed === 0 && waiting === 0,
        detail: `least over ${resting.length} samples at rest: ${stillUsed} used, ${waiting} waiting`,
      },
      withinSlack(ticks, rest, service, "fds", warmupS),
      withinSlack(ticks, rest, service, "timers", warmupS),
    ];
  });
}
