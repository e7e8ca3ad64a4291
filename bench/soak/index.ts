// Soak: a fresh `make up` stack (own database, stream prefix, free ports) under a fixed mixed load for SOAK_MINUTES
// (default 30): wallet callbacks, attestation lookups, agent claims, x402 paid requests and attestations written on
// chain, at SOAK_RATE_CALLBACKS / _LOOKUPS / _CLAIMS / _PAID / _CHAIN per second (defaults in
// tools/stack/src/soak/run.ts). Every service's RSS, heap used, event-loop p99, pool connections, open fds and timers are
// sampled every SOAK_SAMPLE_S (default 10) seconds. After SOAK_WARMUP_MINUTES (default 5) it judges growth ≤ 10 %
// and each service's request p99 flat within noise, then, once the system settled, the leak checks and the exact
// counts (outbox = stream, inbox = applied, payments = transfers). Prints a table; the raw samples go to
// .run/soak/<prefix>.json. Verdicts are printed, not asserted, as every benchmark's (make test-soak asserts the counts
// and the leak checks). Needs the bundles (`make build`).
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { checked, formatReport, judged, ratesFromEnv, runSoak } from "@humanpass/stack/soak";
import { REPO_ROOT } from "@humanpass/testing/service-process";

const env = process.env;
const log = (line: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
// Ctrl-C ends the load early: the soak still settles, reports and removes its stack, database and streams.
const interrupted = new AbortController();
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    log(`${signal}: the load stops here; settling, then the report`);
    interrupted.abort();
  });
const result = await runSoak({
  databaseUrl: env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  natsUrl: env.NATS_URL ?? "nats://127.0.0.1:4222",
  minutes: Number(env.SOAK_MINUTES ?? 30),
  warmupMinutes: Number(env.SOAK_WARMUP_MINUTES ?? 5),
  sampleSeconds: Number(env.SOAK_SAMPLE_S ?? 10),
  rates: ratesFromEnv(env),
  log,
  serviceLog: (service, line) => process.stdout.write(`${service} | ${line}\n`),
  signal: interrupted.signal,
});
const file = path.join(REPO_ROOT, ".run", "soak", `${result.prefix}.json`);
mkdirSync(path.dirname(file), { recursive: true });
writeFileSync(file, JSON.stringify(result, null, 1));
const verdicts = [...judged(result), ...checked(result)];
process.stdout.write(
  `\n${formatReport(result, verdicts)}\n\nraw samples: ${path.relative(REPO_ROOT, file)}\n`,
);
