export {
  FD_SLACK,
  GROWTH_LIMIT_PCT,
  judge,
  leaks,
  p99PerMinute,
  SERIES,
  type SeriesName,
  trend,
} from "./analysis.ts";
export { formatReport, verdicts } from "./report.ts";
export { ratesFromEnv, runSoak, type SoakOptions, type SoakRates, type SoakResult } from "./run.ts";
export type { ServiceSample, Tick } from "./sampler.ts";
