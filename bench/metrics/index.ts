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
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  applyAttestationRecorded,
  applyUniquenessVerified,
  migrations as attestationsMigrations,
} from "@humanpass/attestations-api";
import { createDb, dropDatabase, ensureDatabase, migrateToLatest } from "@humanpass/db";
import { deletePrefixedStreams, jetstreamManager } from "@humanpass/event-bus";
import {
  createChallengeNonces,
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  extractHumanProofChallenge,
  signHumanProofChallengeEVMUnchecked,
} from "@humanpass/human-proof";
import { didFromAddress, iden3IdFromAddress } from "@humanpass/identity";
import { freePort } from "@humanpass/testing/ports";
import { connect } from "@nats-io/transport-node";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { getAddress, keccak256, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const LOOKUPS = Number(process.env.BENCH_LOOKUPS ?? 2000);
const PAID = Number(process.env.BENCH_PAID ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 16);
const SCRAPE_MS = Number(process.env.BENCH_SCRAPE_MS ?? 5000);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const NETWORK = "eip155:45056";
const USDC = "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9";

const dbUrl = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
dbUrl.pathname = `/bench_metrics_${randomBytes(4).toString("hex")}`;
const databaseUrl = dbUrl.toString();
const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const prefix = `bench${randomBytes(4).toString("hex")}`;

const routesFile = path.join(tmpdir(), `${prefix}-routes.json`);
const children: ChildProcess[] = [];

// The gateways get this key, so the bench can issue challenge nonces itself, as another replica would.
const NONCE_KEY = "bench-gateway-challenge-nonce-key-0001";
const benchNonces = createChallengeNonces({ keys: [NONCE_KEY] });

async function startService(
  service: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<string> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      "--conditions=@humanpass/source",
      fileURLToPath(import.meta.resolve(`@humanpass/${service}/main`)),
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        NATS_URL: natsUrl,
        EVENTS_PREFIX: prefix,
        LOG_LEVEL: "warn",
        PORT: String(port),
        HOST: "127.0.0.1",
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        ...env,
      },
      stdio: ["ignore", "inherit", "inherit"],
    },
  );
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${service} exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) return url;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${service} not ready`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function fillReadModel(agents: `0x${string}`[]): Promise<void> {
  const db = createDb<any>({ connectionString: databaseUrl, schema: "attestations", max: 4 });
  await migrateToLatest(db, { schema: "attestations", migrations: attestationsMigrations });
  let n = 0;
  for (const agent of agents) {
    n += 1;
    const human = privateKeyToAccount(generatePrivateKey()).address;
    await applyAttestationRecorded(db, {
      attestationId: keccak256(toHex(`bench-${n}-${agent}`)),
      schemaId: DEFAULT_AGENT_OWNERSHIP_SCHEMA,
      creationTime: Math.floor(Date.now() / 1000) - 3600,
      expirationTime: 0,
      revocationTime: 0,
      attesterDid: didFromAddress(human, "main"),
      attesterIden3Id: iden3IdFromAddress(human, "main"),
      attesterEthereumAddress: human,
      recipientDid: didFromAddress(agent, "main"),
      recipientIden3Id: iden3IdFromAddress(agent, "main"),
      recipientEthereumAddress: getAddress(agent),
      revocable: true,
      refId: `0x${"00".repeat(32)}`,
      data: "0x",
      registry: "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0",
      chainId: 45056,
      blockNumber: n,
      blockHash: keccak256(toHex(`block-${n}`)),
      logIndex: 0,
      txHash: keccak256(toHex(`tx-${n}`)),
    });
    await applyUniquenessVerified(db, {
      sessionId: n,
      nullifier: String(1_000_000 + n),
      nullifierSessionId: "1",
      userDid: didFromAddress(human, "main"),
      userId: iden3IdFromAddress(human, "main"),
      verifiedAt: new Date().toISOString(),
    });
  }
  await db.destroy();
}

/** One payment header per request, as an x402 client (with our human-proof signing for the human tier) makes it. */
async function paymentHeaders(
  url: string,
  keys: `0x${string}`[],
  human: boolean,
  count: number,
): Promise<string[]> {
  const unpaid = await fetch(url);
  const template = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string);
  const clients = keys.map((key) => {
    const client = new x402Client((_v, accepts) => accepts[human ? 1 : 0]).setSpendControls({
      allowedAssets: [{ network: NETWORK, asset: USDC }],
    });
    registerExactEvmScheme(client, { signer: privateKeyToAccount(key) });
    return { client, account: privateKeyToAccount(key) };
  });
  const headers: string[] = [];
  for (let i = 0; i < count; i++) {
    const { client, account } = clients[i % clients.length];
    // A fresh challenge per request: the gateway accepts each proof nonce once.
    const required: PaymentRequired = structuredClone(template);
    const challenge = extractHumanProofChallenge(required);
    if (challenge) {
      const { domain, uri = "" } = challenge.info;
      challenge.info.issuedAt = new Date().toISOString();
      challenge.info.nonce = benchNonces.issue({ domain, uri, issuedAt: challenge.info.issuedAt });
    }
    let payload: PaymentPayload = await client.createPaymentPayload(required);
    if (human && challenge) {
      const proof = await signHumanProofChallengeEVMUnchecked(
        challenge,
        { address: account.address, signMessage: (message) => account.signMessage({ message }) },
        NETWORK,
      );
      payload = { ...payload, extensions: { ...payload.extensions, "human-proof": proof } };
    }
    headers.push(encodePaymentSignatureHeader(payload));
  }
  return headers;
}

type Mode = "on" | "off";
const MODES: Mode[] = ["on", "off"];

/** CPU time (user + system, ms) of one process from /proc; 0 where there is none (not Linux). */
function processCpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

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
  await ensureDatabase(databaseUrl);
  const keys = Array.from({ length: AGENTS }, () => generatePrivateKey());
  const agents = keys.map((k) => privateKeyToAccount(k).address);
  await fillReadModel(agents);
  const metricsEnv = (mode: Mode) => ({ METRICS_ENABLED: String(mode === "on") });
  const api = {} as Record<Mode, string>;
  const pids = {} as Record<Mode, { api: number; gateway: number }>;
  for (const mode of MODES) {
    api[mode] = await startService("attestations-api", { RATE_LIMIT_ENABLED: "false", ...metricsEnv(mode) });
    pids[mode] = { api: children.at(-1)!.pid!, gateway: 0 };
  }
  writeFileSync(
    routesFile,
    JSON.stringify({
      assets: { [NETWORK]: { address: USDC, name: "USD Coin", version: "2", decimals: 6 } },
      routes: [
        {
          path: "/bench",
          description: "bench",
          mimeType: "application/json",
          accepts: [
            { scheme: "exact", price: "$0.01", network: NETWORK },
            {
              scheme: "exact",
              price: "$0.001",
              network: NETWORK,
              extra: { requiredAttestations: ["$ownership"], maxUse: 1_000_000, scope: "bench" },
            },
          ],
          demo: { body: { ok: true } },
        },
      ],
    }),
  );
  const gateway = {} as Record<Mode, string>;
  for (const mode of MODES) {
    gateway[mode] = await startService("payment-gateway", {
      MOCK_FACILITATOR: "true",
      EVM_ADDRESS: "0x000000000000000000000000000000000000dEaD",
      ROUTES_FILE: routesFile,
      ATTESTATIONS_API_URL: api[mode],
      RATE_LIMIT_ENABLED: "false",
      NODE_ENV: "development",
      HUMAN_PROOF_NONCE_KEYS: NONCE_KEY,
      ...metricsEnv(mode),
    });
    pids[mode].gateway = children.at(-1)!.pid!;
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

/** Stops the services, then removes what the run created: its database, its streams and the routes file. */
async function cleanUp(): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null) return resolve(undefined);
          child.once("exit", resolve);
          child.kill("SIGTERM");
        }),
    ),
  );
  const nats = await connect({ servers: natsUrl });
  await deletePrefixedStreams(await jetstreamManager(nats), { prefix });
  await nats.close();
  await dropDatabase(databaseUrl);
  rmSync(routesFile, { force: true });
}

main()
  .catch((error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : error}\n`);
    process.exitCode = 1;
  })
  .finally(cleanUp);
