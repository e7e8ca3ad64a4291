// make bench-compose, on a stack `make compose-up` started: the same HTTP workload (an agent's challenge + claim,
// and an attestation lookup) with 1 replica of every service, then with 2, in the same run. Prints throughput and
// latency percentiles per round; BENCH_ROUNDS rounds (default 3) each, the median reported. The flows come from one
// address through one proxy, so the services run with the rate limit lifted meanwhile (recreated with it, and
// with the stack's own limit again at the end). A round with a failed flow fails the bench: its figures would
// time refusals.
import { performance } from "node:perf_hooks";
import { privateKeyToAccount } from "viem/accounts";
import { readStackFile } from "../stack-file.ts";
import { composeCli, replicasOf } from "./docker.ts";
import { SERVICES, waitAllReady } from "./faults.ts";

const stack = readStackFile();
if (!stack) {
  process.stderr.write("bench-compose: no stack (make compose-up first)\n");
  process.exit(1);
}
const project = process.env.COMPOSE_PROJECT_NAME || "humanpass";
const compose = composeCli(project);
const REQUESTS = Number(process.env.BENCH_REQUESTS || 400);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const agents = stack.pairedAgents.map((a) => privateKeyToAccount(a.privateKey as `0x${string}`));

async function claim(i: number): Promise<boolean> {
  const base = stack!.urls["agent-auth"];
  const challenge = await fetch(`${base}/api/v1/challenge`);
  if (challenge.status !== 200) return false;
  const { nonce, message } = (await challenge.json()) as { nonce: string; message: string };
  const account = agents[i % agents.length]!;
  const r = await fetch(`${base}/api/v1/claim`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ nonce, signature: await account.signMessage({ message }) }),
  });
  await r.arrayBuffer();
  const lookup = await fetch(
    `${stack!.urls["attestations-api"]}/api/v1/attestations?schemaId=${stack!.ownershipSchema}&page_size=10&page_number=1`,
  );
  await lookup.arrayBuffer();
  return r.status === 200 && lookup.status === 200;
}

async function round(): Promise<{ rps: number; p50: number; p99: number; failed: number }> {
  const latencies: number[] = [];
  let next = 0;
  let failed = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const i = next++;
        const t = performance.now();
        const ok = await claim(i).catch(() => false);
        latencies.push(performance.now() - t);
        if (!ok) failed++;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { rps: REQUESTS / seconds, p50: at(0.5), p99: at(0.99), failed };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ready = { replicas: () => replicasOf(project), readyTimeoutMs: 120_000 };
const scaled = (replicas: number, env: NodeJS.ProcessEnv) =>
  compose(["up", "-d", "--no-build", ...SERVICES.flatMap((s) => ["--scale", `${s}=${replicas}`])], env);
let failures = 0;
for (const replicas of [1, 2]) {
  await scaled(replicas, { ...process.env, RATE_LIMIT_MAX: "1000000" });
  await waitAllReady(ready, Date.now());
  await round(); // warm-up
  const results = [];
  for (let r = 0; r < ROUNDS; r++) results.push(await round());
  const line = `${replicas} replica(s): ${median(results.map((r) => r.rps)).toFixed(1)} flows/s, p50 ${median(results.map((r) => r.p50)).toFixed(0)} ms, p99 ${median(results.map((r) => r.p99)).toFixed(0)} ms, failed ${results.map((r) => r.failed).join("/")} (rounds: ${results.map((r) => r.rps.toFixed(1)).join(", ")} flows/s)`;
  process.stdout.write(`${line}\n`);
  failures += results.reduce((sum, r) => sum + r.failed, 0);
}
await scaled(1, process.env);
await waitAllReady(ready, Date.now());
process.stdout.write(
  `\nflow = challenge + claim + attestation lookup through the proxy; ${REQUESTS} flows per round, ${CONCURRENCY} at a time\n`,
);
if (failures > 0) {
  process.stderr.write(`bench-compose: ${failures} flows failed; the figures above are not valid\n`);
  process.exit(1);
}
