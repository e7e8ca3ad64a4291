// payment-gateway, paid requests end to end with MOCK_FACILITATOR=true (no chain): the gateway's main.ts and the
// attestations-api's main.ts run as child processes on one fresh Postgres database with their streams on NATS; the
// API's read model holds one ownership record and one nullifier per agent.
// Payment headers are built before the clock starts (x402 client, EIP-3009 signature, and for the human tier a
// signed human proof with its own nonce), so the figures are the gateway's: the standard tier (x402 verify and
// settle against the mock facilitator, the payment_settled event) and the human tier (the same plus the local
// check of the EIP-3009 signature, the proof's signature recovery, the attestations-API lookup, the nonce, the
// per-human counter and the human_verified event).
// Both tiers are measured in the same run at the same concurrency, in alternating rounds (standard, human, human,
// standard, …) after a warm-up of both, so drift on a shared machine (other processes, the outbox relay catching
// up) falls on both alike. CPU per request counts the gateway, the Postgres backends of this run's database, every
// nats-server and the load generator; with both cores busy their ratio is the throughput ratio other load leaves.
// Then the relay curve: the highest concurrency again with 1, 4 and 12 outbox relays on the gateway's outbox (the
// gateway's own and relays started in the bench's process, as further replicas would run them), Postgres CPU per
// paid request and per event at each: what more replicas cost the database they share.
//   BENCH_REQUESTS (default 1500) per tier and concurrency, BENCH_CONCURRENCY (default "1,16": each is measured),
//   BENCH_RELAYS (default "1,4,12"; "" skips the curve),
//   BENCH_ROUNDS (default 4) rounds per tier, BENCH_AGENTS (default 16); BENCH_PROFILE_DIR: the gateway writes a
//   CPU profile there (node --cpu-prof) when it stops.

import { loadavg } from "node:os";
import { connectNats, type OutboxRelay, startOutboxRelay } from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import pg from "pg";
import pino from "pino";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { type CpuReading, cpuBetween, namedCpuMs, processCpuMs } from "../gateway-setup/cpu.ts";
import {
  type GatewayBench,
  gatewayEnv,
  paymentHeaders,
  prepareGatewayBench,
} from "../gateway-setup/gateway.ts";
import { loadFigures, median, type PaidLoad, sendPaid } from "../gateway-setup/paid-load.ts";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1500);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? "1,16").split(",").map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 16);
const RELAYS = (process.env.BENCH_RELAYS ?? "1,4,12").split(",").filter(Boolean).map(Number);

let bench: GatewayBench | undefined;

type Tier = "standard" | "human";
type Cpu = Record<"gateway" | "postgres" | "nats" | "client", number>;
type Sample = PaidLoad & { cpu: Cpu; events: number };

type Reading = CpuReading<keyof Cpu>;

// Postgres: only the backends of this run's database (the gateway's pool, its outbox relay, the API's), as the
// server is shared with other work on the machine; NATS: every nats-server, which is shared too.
function cpuNow(): Reading {
  const { user, system } = process.cpuUsage();
  return {
    gateway: new Map([["gateway", processCpuMs(bench?.processes[1]?.child.pid ?? 0)]]),
    postgres: namedCpuMs("postgres", bench ? new URL(bench.databaseUrl).pathname.slice(1) : undefined),
    nats: namedCpuMs("nats-server"),
    client: new Map([["client", (user + system) / 1000]]),
  };
}

let database: pg.Client | undefined;

/** Outbox rows the gateway has written so far. */
async function outboxRows(): Promise<number> {
  const { rows } = await database!.query<{ n: string }>(
    "select coalesce(max(seq), 0) as n from payment_gateway.outbox",
  );
  return Number(rows[0]?.n ?? 0);
}

/** Sends `headers` as paid requests, `concurrency` at a time, with the CPU and outbox rows they cost. */
async function run(url: string, headers: string[], concurrency: number): Promise<Sample> {
  const rowsBefore = await outboxRows();
  const cpuBefore = cpuNow();
  const load = await sendPaid(url, headers, concurrency);
  // The events of these requests are published after their responses: let the relay finish before reading CPU.
  await sleep(300);
  const cpu = cpuBetween(cpuBefore, cpuNow());
  return { ...load, cpu, events: (await outboxRows()) - rowsBefore };
}

function summary(samples: Sample[]) {
  const figures = loadFigures(samples);
  return {
    ...figures,
    events: samples.reduce((sum, s) => sum + s.events, 0),
    // µs of CPU per request, each process.
    cpu: Object.fromEntries(
      (["gateway", "postgres", "nats", "client"] as const).map((k) => [
        k,
        (samples.reduce((sum, s) => sum + s.cpu[k], 0) * 1000) / figures.requests,
      ]),
    ) as Cpu,
  };
}

/** Both tiers at one concurrency, in alternating rounds: standard, human, human, standard, … */
async function compare(url: string, headers: Record<Tier, string[]>, concurrency: number) {
  const samples: Record<Tier, Sample[]> = { standard: [], human: [] };
  const size = Math.ceil(REQUESTS / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    const order: Tier[] = round % 2 === 0 ? ["standard", "human"] : ["human", "standard"];
    for (const tier of order) {
      samples[tier].push(await run(url, headers[tier].slice(round * size, (round + 1) * size), concurrency));
    }
  }
  // Each round's pair ran back to back, so its ratio is the figure least moved by the host's other load.
  const perRound = samples.human.map((h, round) => {
    const [hs, ss] = [summary([h]), summary([samples.standard[round]!])];
    return {
      ratio: hs.rps / ss.rps,
      cpuRatio: totalCpu(ss.cpu) / totalCpu(hs.cpu),
      addedP50: hs.p50 - ss.p50,
    };
  });
  return {
    standard: summary(samples.standard),
    human: summary(samples.human),
    ratio: median(perRound.map((r) => r.ratio)),
    addedP50: median(perRound.map((r) => r.addedP50)),
    ratios: perRound.map((r) => r.ratio),
    cpuRatio: median(perRound.map((r) => r.cpuRatio)),
    cpuRatios: perRound.map((r) => r.cpuRatio),
  };
}

/** What one request cost the machine: with both cores busy, throughput is the inverse of it. */
function totalCpu(cpu: Cpu): number {
  return cpu.gateway + cpu.postgres + cpu.nats + cpu.client;
}

async function main() {
  const keys = Array.from({ length: AGENTS }, () => generatePrivateKey());
  bench = await prepareGatewayBench(
    "payment_gateway",
    keys.map((k) => privateKeyToAccount(k).address),
  );
  const attestations = await bench.startService("attestations-api", { RATE_LIMIT_ENABLED: "false" });
  const gateway = await bench.startService(
    "payment-gateway",
    gatewayEnv(bench, attestations),
    process.env.BENCH_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [],
  );
  const url = `${gateway}/bench`;
  database = new pg.Client({ connectionString: bench.databaseUrl });
  await database.connect();

  process.stdout.write(
    `preparing ${REQUESTS} payments per tier and concurrency (${AGENTS} agents), plus a warm-up…\n`,
  );
  const prepare = async () => ({
    standard: await paymentHeaders(url, keys, false, REQUESTS),
    human: await paymentHeaders(url, keys, true, REQUESTS),
  });
  const warmup = {
    standard: await paymentHeaders(url, keys, false, 300),
    human: await paymentHeaders(url, keys, true, 300),
  };
  await compare(url, warmup, Math.max(...CONCURRENCIES));

  process.stdout.write(
    `${REQUESTS} paid requests per tier and concurrency, ${ROUNDS} alternating rounds each, MOCK_FACILITATOR=true\n`,
  );
  const loadBefore = loadavg();
  for (const concurrency of CONCURRENCIES) {
    // Made just before their level, not all up front: on a busy host the last level's would outlive their
    // validity (the authorizations' validBefore, the proofs' age) while the first runs.
    const results = await compare(url, await prepare(), concurrency);
    for (const tier of ["standard", "human"] as const) {
      const r = results[tier];
      process.stdout.write(
        `c=${String(concurrency).padEnd(3)} ${tier.padEnd(9)} ${r.rps.toFixed(0).padStart(6)} paid req/s   p50 ${r.p50.toFixed(2)} ms   p99 ${r.p99.toFixed(2)} ms   non-200: ${r.failures}   ` +
          `CPU µs/req: gateway ${r.cpu.gateway.toFixed(0)}, Postgres ${r.cpu.postgres.toFixed(0)}, NATS ${r.cpu.nats.toFixed(0)}, client ${r.cpu.client.toFixed(0)}\n`,
      );
    }
    process.stdout.write(
      `c=${String(concurrency).padEnd(3)} human / standard req/s ${results.ratio.toFixed(3)} (median of the rounds: ${results.ratios.map((x) => x.toFixed(3)).join(", ")}); ` +
        `human tier adds ${results.addedP50.toFixed(2)} ms at p50 (median of the rounds)\n` +
        `c=${String(concurrency).padEnd(3)} standard / human CPU per request ${results.cpuRatio.toFixed(3)} (median of the rounds: ${results.cpuRatios.map((x) => x.toFixed(3)).join(", ")})\n`,
    );
  }
  if (RELAYS.length > 0) await relayCurve(url, prepare, Math.max(...CONCURRENCIES));
  process.stdout.write(
    `load average (1 min) before ${loadBefore[0]!.toFixed(2)}, after ${loadavg()[0]!.toFixed(2)}\n`,
  );
}

/** Both tiers at `concurrency` with 1, 4, 12, … relays on the gateway's outbox. */
async function relayCurve(url: string, prepare: () => Promise<Record<Tier, string[]>>, concurrency: number) {
  const nats = await connectNats(bench!.natsUrl, pino({ level: "silent" }), "bench-relays");
  const extra: OutboxRelay[] = [];
  try {
    for (const relays of RELAYS) {
      while (extra.length < relays - 1) {
        extra.push(
          startOutboxRelay({
            nats,
            schema: "payment_gateway",
            logger: pino({ level: "warn" }),
            connectionString: bench!.databaseUrl,
          }),
        );
      }
      const results = await compare(url, await prepare(), concurrency);
      for (const tier of ["standard", "human"] as const) {
        const r = results[tier];
        const requests = r.requests;
        process.stdout.write(
          `relays=${String(relays).padEnd(3)} c=${concurrency} ${tier.padEnd(9)} ${r.rps.toFixed(0).padStart(6)} paid req/s   ` +
            `Postgres CPU µs per paid request ${r.cpu.postgres.toFixed(0)}, per event ${((r.cpu.postgres * requests) / Math.max(1, r.events)).toFixed(0)} ` +
            `(${(r.events / requests).toFixed(2)} events per request)\n`,
        );
      }
    }
  } finally {
    await Promise.all(extra.map((r) => r.stop()));
    await nats.close();
  }
}

main()
  .catch((error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : error}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    await database?.end();
    await bench?.cleanUp();
  });
