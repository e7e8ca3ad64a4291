// Metrics on vs off, in the same run: the attestations API's lookup and the payment gateway's paid requests (both
// tiers, MOCK_FACILITATOR=true), each service started twice on one database, once with METRICS_ENABLED=true and
// once with METRICS_ENABLED=false (no meter, not even the HTTP hook). Prometheus is played by a scrape of /metrics
// of the "on" processes every BENCH_SCRAPE_MS (default 5000), so the exposition's cost is in the figures too.
// Rounds alternate (on, off, off, on, …) after a warm-up of each, so drift on a shared machine falls on both alike;
// each figure is the median of the rounds' throughputs. The gateway "on" asks the API "on", the gateway "off" the
// API "off": the whole path is measured as it would run.
// Next to throughput, the CPU time the mode's service processes used per request (from /proc), which a busy shared
// machine disturbs less than throughput.
//   BENCH_ROUNDS (default 10), BENCH_LOOKUPS (default 2000) and BENCH_PAID (default 300) requests per round and
//   mode, BENCH_CONCURRENCY (default 16), BENCH_AGENTS (default 16).
import { loadavg } from "node:os";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "@humanpass/human-proof";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { processCpuMs } from "../gateway-setup/cpu.ts";
import {
  type GatewayBench,
  gatewayEnv,
  paymentHeaders,
  prepareGatewayBench,
} from "../gateway-setup/gateway.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const LOOKUPS = Number(process.env.BENCH_LOOKUPS ?? 2000);
const PAID = Number(process.env.BENCH_PAID ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 16);
const SCRAPE_MS = Number(process.env.BENCH_SCRAPE_MS ?? 5000);

let bench: GatewayBench | undefined;

type Mode = "on" | "off";
const MODES: Mode[] = ["on", "off"];

/**
 * Sends one request per `init`, `concurrency` at a time; the throughput (req/s), the CPU µs per request of the
 * processes `pids` and the non-200 answers.
 */
async function run(url: string, inits: RequestInit[], concurrency: number, pids: number[] = []) {
  let next = 0;
  let failures = 0;
  const cpu = () => pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
  const cpuBefore = cpu();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= inits.length) return;
        const response = await fetch(url, inits[i]);
        await response.arrayBuffer();
        if (response.status !== 200) failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { rps: inits.length / seconds, cpuUs: ((cpu() - cpuBefore) * 1000) / inits.length, failures };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Alternating rounds of `work(mode, round)`, on then off, off then on, …; the median throughput of each mode. */
async function compare(
  name: string,
  work: (mode: Mode, round: number) => Promise<{ rps: number; cpuUs: number; failures: number }>,
) {
  const rps: Record<Mode, number[]> = { on: [], off: [] };
  const cpu: Record<Mode, number[]> = { on: [], off: [] };
  let failures = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 === 0 ? MODES : [...MODES].reverse()) {
      const r = await work(mode, round);
      rps[mode].push(r.rps);
      cpu[mode].push(r.cpuUs);
      failures += r.failures;
    }
  }
  const [on, off] = [median(rps.on), median(rps.off)];
  const [cpuOn, cpuOff] = [median(cpu.on), median(cpu.off)];
  process.stdout.write(
    `${name.padEnd(28)} on ${on.toFixed(0).padStart(6)} req/s   off ${off.toFixed(0).padStart(6)} req/s   on/off ${(on / off).toFixed(3)}   ` +
      `service CPU µs/req on ${cpuOn.toFixed(0)} off ${cpuOff.toFixed(0)} (${(((cpuOn - cpuOff) / cpuOff) * 100).toFixed(1)} %)   non-200: ${failures}\n` +
      `${"".padEnd(28)} rounds req/s on [${rps.on.map((x) => x.toFixed(0)).join(", ")}] off [${rps.off.map((x) => x.toFixed(0)).join(", ")}]\n`,
  );
}

async function main() {
  const keys = Array.from({ length: AGENTS }, () => generatePrivateKey());
  const agents = keys.map((k) => privateKeyToAccount(k).address);
  bench = await prepareGatewayBench("metrics", agents);
  const metricsEnv = (mode: Mode) => ({ METRICS_ENABLED: String(mode === "on") });
  const api = {} as Record<Mode, string>;
  const pids = {} as Record<Mode, { api: number; gateway: number }>;
  for (const mode of MODES) {
    api[mode] = await bench.startService("attestations-api", {
      RATE_LIMIT_ENABLED: "false",
      ...metricsEnv(mode),
    });
    pids[mode] = { api: bench.processes.at(-1)!.child.pid!, gateway: 0 };
  }
  const gateway = {} as Record<Mode, string>;
  for (const mode of MODES) {
    gateway[mode] = await bench.startService("payment-gateway", {
      ...gatewayEnv(bench, api[mode]),
      ...metricsEnv(mode),
    });
    pids[mode].gateway = bench.processes.at(-1)!.child.pid!;
  }

  const lookups = (count: number): RequestInit[] => Array.from({ length: count }, () => ({}));
  const lookupUrl = (mode: Mode, round: number) =>
    `${api[mode]}/api/v1/attestations?schemaId=${DEFAULT_AGENT_OWNERSHIP_SCHEMA}&recipientEthereumAddress=${agents[round % agents.length]}`;
  process.stdout.write(
    `preparing ${ROUNDS} rounds of ${PAID} payments per tier and mode (${AGENTS} agents)…\n`,
  );
  const warmupPaid = 100;
  const paid = {} as Record<Mode, Record<"standard" | "human", RequestInit[]>>;
  for (const mode of MODES) {
    const url = `${gateway[mode]}/bench`;
    const headers = async (human: boolean) =>
      (await paymentHeaders(url, keys, human, warmupPaid + ROUNDS * PAID)).map((h) => ({
        headers: { "payment-signature": h },
      }));
    paid[mode] = { standard: await headers(false), human: await headers(true) };
  }

  // Prometheus's part: the "on" processes are scraped all along.
  const scraped = [api.on, gateway.on];
  const scraper = setInterval(() => {
    for (const base of scraped)
      fetch(`${base}/metrics`).then(
        (r) => r.arrayBuffer(),
        () => {},
      );
  }, SCRAPE_MS);
  const loadBefore = loadavg();
  try {
    for (const mode of MODES) {
      await run(lookupUrl(mode, 0), lookups(LOOKUPS), CONCURRENCY);
      for (const tier of ["standard", "human"] as const)
        await run(`${gateway[mode]}/bench`, paid[mode][tier].slice(0, warmupPaid), CONCURRENCY);
    }
    process.stdout.write(
      `metrics on vs off, c=${CONCURRENCY}, ${ROUNDS} alternating rounds, median of the rounds' throughput\n`,
    );
    await compare(`attestation lookup (${LOOKUPS}/round)`, (mode, round) =>
      run(lookupUrl(mode, round), lookups(LOOKUPS), CONCURRENCY, [pids[mode].api]),
    );
    for (const tier of ["standard", "human"] as const) {
      await compare(`paid ${tier} tier (${PAID}/round)`, (mode, round) => {
        const from = warmupPaid + round * PAID;
        return run(`${gateway[mode]}/bench`, paid[mode][tier].slice(from, from + PAID), CONCURRENCY, [
          pids[mode].gateway,
          pids[mode].api,
        ]);
      });
    }
  } finally {
    clearInterval(scraper);
  }
  const loadAfter = loadavg();
  process.stdout.write(
    `load average (1 min) before ${loadBefore[0]!.toFixed(2)}, after ${loadAfter[0]!.toFixed(2)}; ${
      (await (await fetch(`${api.on}/metrics`)).text()).split("\n").length
    } lines in the API's exposition at the end\n`,
  );
}

main()
  .catch((error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : error}\n`);
    process.exitCode = 1;
  })
  .finally(() => bench?.cleanUp());
