// The soak benchmark's printout: per service and series the value at the end of the warm-up and at the end, growth
// and max; the requests' p99 minute by minute; then every verdict (growth, latency, leaks, exact counts).
import type { Verdict } from "../compose-test/invariants.ts";
import { judge, leaks, SERIES, type SeriesName, trend } from "./analysis.ts";
import type { SoakResult } from "./run.ts";

const pad = (cells: string[], widths: number[]) =>
  cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [pad(header, widths), ...rows.map((r) => pad(r, widths))].join("\n");
}

/** The benchmark's judgement: growth after the warm-up and each service's request p99 over time. */
export function judged(result: SoakResult): Verdict[] {
  const minutes = new Map(
    Object.entries(result.p99PerMinute).map(([s, v]) => [s, v.map((x) => x ?? undefined)]),
  );
  return judge(result.ticks, minutes, result.services, result.options.warmupMinutes * 60);
}

/** What holds whatever the machine's speed: the leak checks and the exact counts. */
export function checked(result: SoakResult): Verdict[] {
  return [
    ...leaks(result.ticks, result.rest, result.services, result.options.warmupMinutes * 60),
    ...result.invariants,
  ];
}

/** The figures, then `verdicts` one a line. */
export function formatReport(result: SoakResult, verdicts: Verdict[]): string {
  const { options } = result;
  const warmupS = options.warmupMinutes * 60;
  const figures: string[][] = [];
  for (const service of result.services) {
    for (const series of Object.keys(SERIES) as SeriesName[]) {
      const t = trend(result.ticks, service, series, warmupS);
      figures.push(
        t
          ? [
              service,
              SERIES[series].label,
              t.atWarmup.toFixed(1),
              t.atEnd.toFixed(1),
              `${t.growthPct >= 0 ? "+" : ""}${t.growthPct.toFixed(1)}`,
              t.max.toFixed(1),
            ]
          : [service, SERIES[series].label, "–", "–", "–", "–"],
      );
    }
  }
  const called = Object.keys(result.p99PerMinute);
  const minuteCount = Math.max(0, ...Object.values(result.p99PerMinute).map((v) => v.length));
  const perMinute = Array.from({ length: minuteCount }, (_, m) => [
    String(m + 1),
    ...called.map((s) => {
      const v = result.p99PerMinute[s]![m];
      return v === null || v === undefined ? "–" : v.toFixed(0);
    }),
  ]);
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(" ");
  return [
    `soak: ${options.minutes} min (warm-up ${options.warmupMinutes}), a sample every ${options.sampleSeconds} s, ` +
      `rates per second ${JSON.stringify(options.rates)}`,
    `done: ${Object.entries(result.counts)
      .map(([k, v]) => `${v} ${k}`)
      .join(", ")}; settled: ${result.settled ? "yes" : "NO"}`,
    `load average (1, 5, 15 min) at the start ${load(result.loadAverage.before)}, at the end ${load(result.loadAverage.after)}`,
    "",
    table(
      [
        "service",
        "series",
        `at min ${options.warmupMinutes}`,
        `at min ${Math.round((result.ticks.at(-1)?.t ?? 0) / 60)}`,
        "growth %",
        "max",
      ],
      figures,
    ),
    "",
    "request p99 (ms) per minute, by service called",
    table(["min", ...called], perMinute),
    "",
    ...verdicts.map((v) => `${v.ok ? "ok  " : "FAIL"} ${v.invariant}: ${v.detail}`),
  ].join("\n");
}
