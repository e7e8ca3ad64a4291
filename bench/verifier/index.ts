// verifier: verified callbacks per second through the real service (POST /api/callback, worker pool, real
// fullVerify, the public V3 test token) for each engine in the same run, rounds interleaved so that the machine's
// load drifts over all engines alike; /api/status p50/p99 while the verification saturates the CPU; the latency of
// one callback at a time; CPU of the service process per callback. Then, in this thread, CPU per token and a profile
// of verification by package. Every callback is fully verified (steps 1-5 of spec 1); the first records the
// nullifier (200), the others stop at step 6 with "already verified" (400) — the same verification work.
//   BENCH_SECONDS (default 15) per measurement, BENCH_ROUNDS (3), BENCH_CONCURRENCY (16),
//   BENCH_ENGINES (batch,single,library), VERIFIER_WORKERS (default: cores), VERIFIER_WORKER_NICENESS (10).

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { createDb, dropDatabase, ensureDatabase, migrateToLatest } from "@humanpass/db";
import { sleep } from "@humanpass/retry";
import {
  createDocumentLoader,
  createTokenVerifier,
  insertSession,
  migrations,
  SCHEMA,
  VERIFIER_ENGINES,
  type VerifierDatabase,
  type VerifierEngine,
} from "@humanpass/verifier";
import {
  ANY_PROOF_AGE_MS,
  FIXTURE_CONTEXTS_DIR,
  latestStateResolvers,
  stable,
} from "@humanpass/verifier/testing";
import { profileByPackage } from "./profile.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ENGINES = (process.env.BENCH_ENGINES ?? VERIFIER_ENGINES.join(","))
  .split(",")
  .filter((e): e is VerifierEngine => (VERIFIER_ENGINES as readonly string[]).includes(e));
/** Sequential callbacks timed for the one-at-a-time latency (the library engine is too slow to be compared). */
const SEQUENTIAL = 40;
const serverScript = fileURLToPath(new URL("./server.ts", import.meta.url));
const CLOCK_TICKS_PER_SECOND = 100;

const base = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
const dbName = `bench_verifier_${randomBytes(4).toString("hex")}`;
const dbUrl = new URL(base);
dbUrl.pathname = `/${dbName}`;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/** User + system CPU seconds of a process, all its threads (Linux /proc). */
function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

async function startServer(engine: VerifierEngine): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--conditions=@humanpass/source", serverScript], {
    env: { ...process.env, DATABASE_URL: dbUrl.toString(), VERIFIER_ENGINE: engine },
    stdio: ["ignore", "pipe", "inherit"],
  });
  child.stdout?.setEncoding("utf8");
  let output = "";
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.on("data", (chunk: string) => {
      output += chunk;
      const match = /listening (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`bench server exited (${code})`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

async function stopServer(server: { child: ChildProcess }): Promise<void> {
  if (server.child.exitCode !== null) return;
  server.child.kill("SIGTERM");
  await once(server.child, "exit");
}

/** Sequential status requests until `until()`; returns each latency in ms. */
async function statusLatencies(url: string, until: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  while (!until()) {
    const started = performance.now();
    const response = await fetch(`${url}/api/status/3`);
    await response.arrayBuffer();
    latencies.push(performance.now() - started);
    await sleep(5);
  }
  return latencies.sort((a, b) => a - b);
}

interface Measurement {
  callbacksPerSecond: number;
  statusP50: number;
  statusP99: number;
  /** CPU seconds of the whole service process (event loop, workers, HTTP, Postgres client) per callback. */
  cpuMsPerCallback: number;
  /** Median latency of one callback at a time, ms (not measured for the library engine). */
  sequentialMs?: number;
}

async function measure(engine: VerifierEngine): Promise<Measurement> {
  const server = await startServer(engine);
  try {
    const { url } = server;
    const callback = async () => {
      const response = await fetch(`${url}/api/callback?sessionId=3`, { method: "POST", body: stable.token });
      await response.arrayBuffer();
      if (response.status !== 200 && response.status !== 400)
        throw new Error(`callback answered ${response.status}`);
    };
    for (let i = 0; i < 2; i++) await Promise.all(Array.from({ length: CONCURRENCY }, callback)); // JIT, caches

    let done = 0;
    let stop = false;
    const cpuBefore = processCpuSeconds(server.child.pid as number);
    const started = performance.now();
    const loaders = Array.from({ length: CONCURRENCY }, async () => {
      while (!stop) {
        await callback();
        done += 1;
      }
    });
    const busy = statusLatencies(url, () => stop);
    await sleep(SECONDS * 1000);
    stop = true;
    await Promise.all(loaders);
    const elapsed = (performance.now() - started) / 1000;
    const cpuSeconds = processCpuSeconds(server.child.pid as number) - cpuBefore;
    const saturated = await busy;

    let sequentialMs: number | undefined;
    if (engine !== "library") {
      const latencies: number[] = [];
      for (let i = 0; i < SEQUENTIAL; i++) {
        const t = performance.now();
        await callback();
        latencies.push(performance.now() - t);
      }
      sequentialMs = median(latencies);
    }
    return {
      callbacksPerSecond: done / elapsed,
      statusP50: percentile(saturated, 50),
      statusP99: percentile(saturated, 99),
      cpuMsPerCallback: (cpuSeconds * 1000) / done,
      sequentialMs,
    };
  } finally {
    await stopServer(server);
  }
}

const workers = process.env.VERIFIER_WORKERS ?? String(availableParallelism());
process.stdout.write(
  `${cpus()[0]?.model ?? "?"}, ${availableParallelism()} cores, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}; ${workers} worker thread(s) at nice ${process.env.VERIFIER_WORKER_NICENESS ?? 10}, ` +
    `${CONCURRENCY} concurrent callbacks, ${SECONDS} s per measurement, ${ROUNDS} rounds (engines interleaved)\n`,
);

const results = new Map<VerifierEngine, Measurement[]>(ENGINES.map((e) => [e, []]));
await ensureDatabase(dbUrl.toString());
const db = createDb<VerifierDatabase>({ connectionString: dbUrl.toString(), schema: SCHEMA, max: 2 });
try {
  await migrateToLatest(db, { schema: SCHEMA, migrations });
  await insertSession(db, stable.sessionId, stable.request, new Date(), new Date(Date.now() + 86_400_000));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const engine of ENGINES) {
      const m = await measure(engine);
      results.get(engine)?.push(m);
      process.stdout.write(
        `  round ${round} ${engine.padEnd(7)} ${m.callbacksPerSecond.toFixed(1).padStart(6)} callbacks/s, status p50 ${m.statusP50.toFixed(1)} / p99 ${m.statusP99.toFixed(1)} ms, ` +
          `${m.cpuMsPerCallback.toFixed(1)} ms CPU per callback${m.sequentialMs === undefined ? "" : `, one at a time ${m.sequentialMs.toFixed(1)} ms`} (load ${loadavg()[0].toFixed(1)})\n`,
      );
    }
  }
} finally {
  await db.destroy();
  await dropDatabase(dbUrl.toString());
}

const medians = new Map(
  [...results].map(([engine, ms]) => [
    engine,
    {
      callbacksPerSecond: median(ms.map((m) => m.callbacksPerSecond)),
      statusP50: median(ms.map((m) => m.statusP50)),
      statusP99: median(ms.map((m) => m.statusP99)),
      cpuMsPerCallback: median(ms.map((m) => m.cpuMsPerCallback)),
      sequentialMs:
        ms[0]?.sequentialMs === undefined ? undefined : median(ms.map((m) => m.sequentialMs ?? 0)),
    },
  ]),
);
process.stdout.write(`median of ${ROUNDS} rounds:\n`);
process.stdout.write(
  "  engine  | callbacks/s | status p50 / p99 saturated | CPU ms per callback | one at a time\n",
);
for (const [engine, m] of medians) {
  process.stdout.write(
    `  ${engine.padEnd(7)} | ${m.callbacksPerSecond.toFixed(1).padStart(11)} | ${`${m.statusP50.toFixed(1)} / ${m.statusP99.toFixed(1)} ms`.padStart(26)} | ${m.cpuMsPerCallback.toFixed(1).padStart(19)} | ${m.sequentialMs === undefined ? "-" : `${m.sequentialMs.toFixed(1)} ms`}\n`,
  );
}
const batch = medians.get("batch");
const single = medians.get("single");
const library = medians.get("library");
if (batch && single) {
  process.stdout.write(
    `  batch / single: ${(batch.callbacksPerSecond / single.callbacksPerSecond).toFixed(2)}x callbacks/s; one at a time batch - single ${((batch.sequentialMs ?? 0) - (single.sequentialMs ?? 0)).toFixed(1)} ms\n`,
  );
}
if (batch && library) {
  process.stdout.write(
    `  batch / library: ${(batch.callbacksPerSecond / library.callbacksPerSecond).toFixed(1)}x callbacks/s\n`,
  );
}

// Where verification spends its CPU, in this thread (same code the workers run), CONCURRENCY tokens in flight so
// that the batch engine batches as in a saturated worker. The library engine first: the others install the
// Poseidon memo in this thread for good.
const documentLoader = createDocumentLoader({ localDirs: [FIXTURE_CONTEXTS_DIR] });
const threadEngines = (["library", "single", "batch"] as const).filter((e) => ENGINES.includes(e));
for (const engine of threadEngines) {
  const verifier = await createTokenVerifier({
    stateResolvers: latestStateResolvers(stable.network),
    documentLoader,
    proofMaxAgeMs: ANY_PROOF_AGE_MS,
    engine,
  });
  const inFlight = () =>
    Promise.all(
      Array.from({ length: CONCURRENCY }, () =>
        verifier.verify(stable.token, stable.request, stable.sessionId),
      ),
    );
  const rounds = engine === "library" ? 2 : 8;
  await inFlight();
  // CPU time (user + system of this process) barely depends on what else the machine runs, wall time does.
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < rounds; i++) await inFlight();
  const cpu = process.cpuUsage(cpuBefore);
  const cpuMs = (cpu.user + cpu.system) / 1000 / (rounds * CONCURRENCY);
  process.stdout.write(
    `one thread, ${engine}: ${cpuMs.toFixed(1)} ms CPU per token with ${CONCURRENCY} in flight => at most ${(availableParallelism() * (1000 / cpuMs)).toFixed(0)} verifications/s on ${availableParallelism()} cores\n`,
  );
  if (engine === "batch" || (engine === "single" && !ENGINES.includes("batch"))) {
    const shares = await profileByPackage(async () => {
      for (let i = 0; i < rounds; i++) await inFlight();
    });
    process.stdout.write(`profile of one thread (${engine}), self time by package:\n`);
    for (const { owner, share } of shares.slice(0, 10)) {
      process.stdout.write(`  ${(share * 100).toFixed(1).padStart(5)}%  ${owner}\n`);
    }
  }
}
