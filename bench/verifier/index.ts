// verifier: verified callbacks per second through the real service (POST /api/callback, worker pool, real
// fullVerify with the mcl Groth16 verifier, the public V3 test token) and /api/status p50/p99 while the
// verification saturates the CPU; then a CPU profile of verification by package (where the time goes).
// Every callback is fully verified (steps 1-5 of spec 1); the first records the nullifier (200), the others
// stop at step 6 with "already verified" (400) — the same verification work.
//   BENCH_SECONDS (default 15), BENCH_CONCURRENCY (default 16), VERIFIER_WORKERS (default: cores),
//   VERIFIER_ENGINE=library to measure the libraries' own path, VERIFIER_WORKER_NICENESS (default 10).
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { createDb, dropDatabase, ensureDatabase, migrateToLatest } from "@humanpass/db";
import { migrations } from "../../services/verifier/src/db/migrations";
import { SCHEMA, type VerifierDatabase } from "../../services/verifier/src/db/schema";
import { insertSession } from "../../services/verifier/src/db/sessions";
import { createDocumentLoader } from "../../services/verifier/src/verification/document-loader";
import { createTokenVerifier } from "../../services/verifier/src/verification/token-verifier";
import {
  ANY_PROOF_AGE_MS,
  FIXTURE_CONTEXTS_DIR,
  latestStateResolvers,
  stable,
} from "../../services/verifier/test/support/fixtures";
import { profileByPackage } from "./profile";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const serverScript = fileURLToPath(new URL("./server.ts", import.meta.url));

const base = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
const dbName = `bench_verifier_${randomBytes(4).toString("hex")}`;
const dbUrl = new URL(base);
dbUrl.pathname = `/${dbName}`;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function startServer(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--conditions=@humanpass/source", "--import", "tsx", serverScript], {
    env: { ...process.env, DATABASE_URL: dbUrl.toString() },
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

/** Sequential status requests until `until()`; returns each latency in ms. */
async function statusLatencies(url: string, until: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  while (!until()) {
    const started = performance.now();
    const response = await fetch(`${url}/api/status/3`);
    await response.arrayBuffer();
    latencies.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 5));
  }
  return latencies.sort((a, b) => a - b);
}

const summary = (latencies: number[]) =>
  `p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${latencies[latencies.length - 1].toFixed(1)} ms (n=${latencies.length})`;

await ensureDatabase(dbUrl.toString());
const db = createDb<VerifierDatabase>({ connectionString: dbUrl.toString(), schema: SCHEMA, max: 2 });
let server: { child: ChildProcess; url: string } | undefined;
try {
  await migrateToLatest(db, { schema: SCHEMA, migrations });
  await insertSession(db, stable.sessionId, stable.request, new Date(), new Date(Date.now() + 86_400_000));
  server = await startServer();
  const { url } = server;
  const callback = async () => {
    const response = await fetch(`${url}/api/callback?sessionId=3`, { method: "POST", body: stable.token });
    await response.arrayBuffer();
    if (response.status !== 200 && response.status !== 400)
      throw new Error(`callback answered ${response.status}`);
    return response.status;
  };

  for (let i = 0; i < 2 * CONCURRENCY; i += CONCURRENCY) {
    await Promise.all(Array.from({ length: CONCURRENCY }, callback)); // warm every worker (JIT, caches)
  }
  let idleEnd = Date.now() + 3000;
  const idle = await statusLatencies(url, () => Date.now() > idleEnd);

  let done = 0;
  let stop = false;
  const started = performance.now();
  const loaders = Array.from({ length: CONCURRENCY }, async () => {
    while (!stop) {
      await callback();
      done += 1;
    }
  });
  const busy = statusLatencies(url, () => stop);
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  stop = true;
  await Promise.all(loaders);
  const elapsed = (performance.now() - started) / 1000;
  const loaded = await busy;
  idleEnd = 0;

  const workers = process.env.VERIFIER_WORKERS ?? String(availableParallelism());
  process.stdout.write(
    `engine ${process.env.VERIFIER_ENGINE ?? "fast"}, ${workers} worker thread(s) at nice ${process.env.VERIFIER_WORKER_NICENESS ?? 10}, ${CONCURRENCY} concurrent callbacks, ${elapsed.toFixed(1)} s\n`,
  );
  process.stdout.write(`  verified callbacks/s   ${(done / elapsed).toFixed(1)}  (${done} callbacks)\n`);
  process.stdout.write(`  /api/status idle       ${summary(idle)}\n`);
  process.stdout.write(`  /api/status saturated  ${summary(loaded)}\n`);
} finally {
  if (server && server.child.exitCode === null) {
    server.child.kill("SIGTERM");
    await once(server.child, "exit");
  }
  await db.destroy();
  await dropDatabase(dbUrl.toString());
}

// Where one verification spends its CPU, in this thread (same code the workers run).
const verifier = await createTokenVerifier({
  stateResolvers: latestStateResolvers(stable.network),
  documentLoader: createDocumentLoader({ localDirs: [FIXTURE_CONTEXTS_DIR] }),
  proofMaxAgeMs: ANY_PROOF_AGE_MS,
  engine: process.env.VERIFIER_ENGINE === "library" ? "library" : "fast",
});
for (let i = 0; i < 10; i++) await verifier.verify(stable.token, stable.request, stable.sessionId);
// CPU time (user + system of this process) barely depends on what else the machine runs, wall time does.
const MEASURED = 60;
const cpuBefore = process.cpuUsage();
const wallBefore = performance.now();
for (let i = 0; i < MEASURED; i++) await verifier.verify(stable.token, stable.request, stable.sessionId);
const cpu = process.cpuUsage(cpuBefore);
const cpuMs = (cpu.user + cpu.system) / 1000 / MEASURED;
const wallMs = (performance.now() - wallBefore) / MEASURED;
process.stdout.write(
  `one thread: ${cpuMs.toFixed(1)} ms CPU, ${wallMs.toFixed(1)} ms wall per token => at most ${(availableParallelism() * (1000 / cpuMs)).toFixed(0)} verifications/s on ${availableParallelism()} cores\n`,
);
const shares = await profileByPackage(async () => {
  for (let i = 0; i < MEASURED; i++) await verifier.verify(stable.token, stable.request, stable.sessionId);
});
process.stdout.write("profile of one thread, self time by package:\n");
for (const { owner, share } of shares.slice(0, 10)) {
  process.stdout.write(`  ${(share * 100).toFixed(1).padStart(5)}%  ${owner}\n`);
}
