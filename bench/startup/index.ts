// Start-up of each service as the images run it (node --enable-source-maps dist/service.js, its bundle), on a quiet
// host and beside two CPU-bound processes (as many as this machine has cores), in the same run: the time from
// spawning the process to the first 200 of /readyz, and the resident set size right then. Every start is against the
// same devnet, Postgres database and NATS streams, already migrated and created by a first start of the whole stack,
// so every start does the same work; quiet and loaded starts alternate within each round. The verifier runs one
// worker per core, as the images do. Each start also runs with and without Node's compile cache (NODE_COMPILE_CACHE,
// a directory per service that a first start filled, as the images carry one built with them), to show what the
// cache buys. Prints the median of BENCH_ROUNDS (default 5) rounds per service and condition.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { dropDatabase, ensureDatabase } from "@humanpass/db";
import { connectNats, deletePrefixedStreams, jetstreamManager } from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import { randomPrefix, SERVICE_NAMES, type ServiceName, startStack } from "@humanpass/stack";
import { freePort } from "@humanpass/testing/ports";
import { REPO_ROOT } from "@humanpass/testing/service-process";
import pino from "pino";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const READY_TIMEOUT_MS = 120_000;
const HOGS = Number(process.env.BENCH_HOGS ?? 2);
const CONDITIONS = ["quiet", "hogged", "quiet cached", "hogged cached"] as const;
type Condition = (typeof CONDITIONS)[number];
const cacheRoot = mkdtempSync(path.join(tmpdir(), "bench-compile-cache-"));

const dbUrl = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
dbUrl.pathname = `/bench_startup_${randomPrefix()}`;
const databaseUrl = dbUrl.toString();

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const rssMiB = (pid: number) => {
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kib) / 1024;
};

/** CPU time the process (all its threads) has used: less swayed by a busy host than the wall clock. */
const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  // utime and stime, fields 14 and 15 of proc(5), in clock ticks of 10 ms.
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Processes that only burn CPU, until stopped. */
function hogs(count: number): ChildProcess[] {
  return Array.from({ length: count }, () =>
    spawn(process.execPath, ["-e", "for (;;);"], { stdio: "ignore" }),
  );
}

/** One start: milliseconds from spawn to the first /readyz 200, and the RSS then. */
async function startOnce(name: ServiceName, condition: Condition, env: Record<string, string>) {
  const port = await freePort();
  const load = condition.startsWith("hogged") ? hogs(HOGS) : [];
  const cache = condition.endsWith("cached") ? { NODE_COMPILE_CACHE: path.join(cacheRoot, name) } : {};
  const started = performance.now();
  const child = spawn(
    process.execPath,
    ["--enable-source-maps", path.join(REPO_ROOT, `services/${name}/dist/service.js`)],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        ...env,
        ...cache,
        PORT: String(port),
        LOG_LEVEL: "warn",
        LOG_PRETTY: "false",
        VERIFIER_WORKERS: "0",
      },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk) => {
    stderr += chunk;
  });
  try {
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`${name} (${condition}) exited ${child.exitCode}: ${stderr}`);
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1_000) }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return { ms: performance.now() - started, cpu: cpuMs(child.pid!), rss: rssMiB(child.pid!) };
      if (performance.now() - started > READY_TIMEOUT_MS)
        throw new Error(`${name} (${condition}) was not ready`);
      await sleep(20);
    }
  } finally {
    await Promise.all([child, ...load].map(stop));
  }
}

await ensureDatabase(databaseUrl);
const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const prefix = randomPrefix();
const stack = await startStack({
  databaseUrl,
  natsUrl,
  prefix,
  logLevel: "warn",
  log: () => {},
});
const results = new Map<string, { ms: number[]; cpu: number[]; rss: number[] }>();
try {
  // The stack's own processes made the schemas and streams; the measured starts run alone beside the devnet.
  await Promise.all(Object.values(stack.processes).map((p) => p.stop()));
  // Fills each service's compile cache, as the image build does.
  for (const name of SERVICE_NAMES) await startOnce(name, "quiet cached", stack.environments[name]);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const name of SERVICE_NAMES) {
      for (const condition of round % 2 ? CONDITIONS : [...CONDITIONS].reverse()) {
        const { ms, cpu, rss } = await startOnce(name, condition, stack.environments[name]);
        const key = `${name} ${condition}`;
        const entry = results.get(key) ?? { ms: [], cpu: [], rss: [] };
        entry.ms.push(ms);
        entry.cpu.push(cpu);
        entry.rss.push(rss);
        results.set(key, entry);
      }
    }
    process.stdout.write(`round ${round}/${ROUNDS} done\n`);
  }
} finally {
  await stack.stop();
  const nats = await connectNats(natsUrl, pino({ level: "warn" }));
  await deletePrefixedStreams(await jetstreamManager(nats), { prefix });
  await nats.close();
  await dropDatabase(databaseUrl);
  rmSync(cacheRoot, { recursive: true, force: true });
}

process.stdout.write(
  `\nstart-up to /readyz 200, median of ${ROUNDS} (ms), the CPU time used by then (ms) and RSS then (MiB); hogged: ` +
    `beside ${HOGS} CPU-bound processes; cached: with a warm NODE_COMPILE_CACHE\n` +
    "| service | quiet ms | hogged ms | hogged/quiet | quiet cached ms | hogged cached ms | CPU ms | CPU ms cached | quiet RSS |\n" +
    "| - | - | - | - | - | - | - | - | - |\n",
);
for (const name of SERVICE_NAMES) {
  const at = (condition: Condition) => results.get(`${name} ${condition}`)!;
  const [q, h, qc, hc] = CONDITIONS.map((c) => median(at(c).ms)) as [number, number, number, number];
  const cpu = median([...at("quiet").cpu, ...at("hogged").cpu]);
  const cpuCached = median([...at("quiet cached").cpu, ...at("hogged cached").cpu]);
  process.stdout.write(
    `| ${name} | ${q.toFixed(0)} | ${h.toFixed(0)} | ${(h / q).toFixed(2)} | ${qc.toFixed(0)} | ${hc.toFixed(0)} | ` +
      `${cpu.toFixed(0)} | ${cpuCached.toFixed(0)} | ${median(at("quiet").rss).toFixed(0)} |\n`,
  );
}
