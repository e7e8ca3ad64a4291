// Start-up of each service, compiled (node --enable-source-maps dist/service.js, its bundle, as the images run it)
// against tsx (node --import tsx src/main.ts, the development path), in the same run: the time from spawning the
// process to the first 200 of /readyz, and the resident set size right then. Every start is against the same devnet,
// Postgres database and NATS streams, already migrated and created by a first start of the whole stack, so both
// modes do the same work; compiled and tsx starts alternate within each round. tsx's transform cache is warm after
// the first round. Prints the median of BENCH_ROUNDS (default 5) rounds per service and mode, and the ratios.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { dropDatabase, ensureDatabase } from "@humanpass/db";
import { connectNats, deletePrefixedStreams, jetstreamManager } from "@humanpass/event-bus";
import { REPO_ROOT, randomPrefix, SERVICE_NAMES, type ServiceName, startStack } from "@humanpass/stack";
import { freePort } from "@humanpass/testing/ports";
import pino from "pino";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const READY_TIMEOUT_MS = 120_000;
const MODES = {
  compiled: (name: ServiceName) => [
    "--enable-source-maps",
    path.join(REPO_ROOT, `services/${name}/dist/service.js`),
  ],
  tsx: (name: ServiceName) => [
    "--conditions=@humanpass/source",
    "--import",
    "tsx",
    path.join(REPO_ROOT, `services/${name}/src/main.ts`),
  ],
} as const;
type Mode = keyof typeof MODES;

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

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}

/** One start: milliseconds from spawn to the first /readyz 200, and the RSS then. */
async function startOnce(name: ServiceName, mode: Mode, env: Record<string, string>) {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, MODES[mode](name), {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: "warn", LOG_PRETTY: "false" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => {
    stderr += chunk;
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${name} (${mode}) exited ${child.exitCode}: ${stderr}`);
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1_000) }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return { ms: performance.now() - started, rss: rssMiB(child.pid!) };
      if (performance.now() - started > READY_TIMEOUT_MS) throw new Error(`${name} (${mode}) was not ready`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await stop(child);
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
const results = new Map<string, { ms: number[]; rss: number[] }>();
try {
  // The stack's own processes made the schemas and streams; the measured starts run alone beside the devnet.
  await Promise.all(Object.values(stack.processes).map((p) => p.stop()));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const name of SERVICE_NAMES) {
      for (const mode of (round % 2 ? ["compiled", "tsx"] : ["tsx", "compiled"]) as Mode[]) {
        const { ms, rss } = await startOnce(name, mode, stack.environments[name]);
        const key = `${name} ${mode}`;
        const entry = results.get(key) ?? { ms: [], rss: [] };
        entry.ms.push(ms);
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
}

process.stdout.write(
  `\nstart-up to /readyz 200, median of ${ROUNDS} (ms), and RSS then (MiB)\n` +
    "| service | compiled ms | tsx ms | compiled/tsx | compiled RSS | tsx RSS |\n| - | - | - | - | - | - |\n",
);
for (const name of SERVICE_NAMES) {
  const compiled = results.get(`${name} compiled`)!;
  const tsx = results.get(`${name} tsx`)!;
  const [cMs, tMs] = [median(compiled.ms), median(tsx.ms)];
  process.stdout.write(
    `| ${name} | ${cMs.toFixed(0)} | ${tMs.toFixed(0)} | ${(cMs / tMs).toFixed(2)} | ${median(compiled.rss).toFixed(0)} | ${median(tsx.rss).toFixed(0)} |\n`,
  );
}
