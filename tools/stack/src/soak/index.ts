export { checked, formatReport, judged } from "./report.ts";
export { ratesFromEnv, runSoak, type SoakOptions, type SoakRates, type SoakResult } from "./run.ts";
