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
// up) falls on both alike.
//   BENCH_REQUESTS (default 1500) per tier and concurrency, BENCH_CONCURRENCY (default "1,16": each is measured),
//   BENCH_ROUNDS (default 4) rounds per tier, BENCH_AGENTS (default 16); BENCH_PROFILE_DIR: the gateway writes a
//   CPU profile there (node --cpu-prof) when it stops.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
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

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1500);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? "1,16").split(",").map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 16);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const NETWORK = "eip155:45056";
const USDC = "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9";

const dbUrl = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
dbUrl.pathname = `/bench_payment_gateway_${randomBytes(4).toString("hex")}`;
const databaseUrl = dbUrl.toString();
const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const prefix = `bench${randomBytes(4).toString("hex")}`;

const routesFile = path.join(tmpdir(), `${prefix}-routes.json`);
const children: ChildProcess[] = [];

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

// The gateway gets this key, so the bench can issue challenge nonces itself, as another replica would.
const NONCE_KEY = "bench-gateway-challenge-nonce-key-0001";
const benchNonces = createChallengeNonces({ keys: [NONCE_KEY] });

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

type Tier = "standard" | "human";
type Cpu = Record<"gateway" | "postgres" | "nats" | "client", number>;
type Sample = { latencies: number[]; seconds: number; failures: number; cpu: Cpu };

/** CPU time (user + system, ms) of one process from /proc; 0 where there is none (not Linux). */
function processCpuMs(pid: number | string): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** CPU time of every process whose command name is `name` (all of Postgres's backends, the NATS server). */
function namedCpuMs(name: string): number {
  let sum = 0;
  for (const pid of existsSync("/proc") ? readdirSync("/proc") : []) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === name) sum += processCpuMs(pid);
    } catch {}
  }
  return sum;
}

function cpuNow(): Cpu {
  const { user, system } = process.cpuUsage();
  return {
    gateway: processCpuMs(children[1]?.pid ?? 0),
    postgres: namedCpuMs("postgres"),
    nats: namedCpuMs("nats-server"),
    client: (user + system) / 1000,
  };
}

/** Sends `headers` as paid requests, `concurrency` at a time. */
async function run(url: string, headers: string[], concurrency: number): Promise<Sample> {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const cpuBefore = cpuNow();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= headers.length) return;
        const t = performance.now();
        const response = await fetch(url, { headers: { "payment-signature": headers[i] } });
        await response.arrayBuffer();
        latencies.push(performance.now() - t);
        if (response.status !== 200) failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  // The events of these requests are published after their responses: let the relay finish before reading CPU.
  await new Promise((r) => setTimeout(r, 300));
  const cpuAfter = cpuNow();
  const cpu = Object.fromEntries(
    Object.entries(cpuAfter).map(([k, v]) => [k, v - cpuBefore[k as keyof Cpu]]),
  ) as Cpu;
  return { latencies, seconds, failures, cpu };
}

function summary(samples: Sample[]) {
  const latencies = samples.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const seconds = samples.reduce((sum, s) => sum + s.seconds, 0);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return {
    rps: latencies.length / seconds,
    p50: at(0.5),
    p99: at(0.99),
    failures: samples.reduce((sum, s) => sum + s.failures, 0),
    // µs of CPU per request, each process.
    cpu: Object.fromEntries(
      (["gateway", "postgres", "nats", "client"] as const).map((k) => [
        k,
        (samples.reduce((sum, s) => sum + s.cpu[k], 0) * 1000) / latencies.length,
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
  return { standard: summary(samples.standard), human: summary(samples.human) };
}

async function main() {
  await ensureDatabase(databaseUrl);
  const keys = Array.from({ length: AGENTS }, () => generatePrivateKey());
  await fillReadModel(keys.map((k) => privateKeyToAccount(k).address));
  const attestations = await startService("attestations-api", {
    RATE_LIMIT_ENABLED: "false",
  });
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
  const gateway = await startService(
    "payment-gateway",
    {
      MOCK_FACILITATOR: "true",
      EVM_ADDRESS: "0x000000000000000000000000000000000000dEaD",
      ROUTES_FILE: routesFile,
      ATTESTATIONS_API_URL: attestations,
      RATE_LIMIT_ENABLED: "false",
      NODE_ENV: "development",
      HUMAN_PROOF_NONCE_KEYS: NONCE_KEY,
    },
    process.env.BENCH_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [],
  );
  const url = `${gateway}/bench`;

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
  const batches = [];
  for (const _ of CONCURRENCIES) batches.push(await prepare());
  await compare(url, warmup, Math.max(...CONCURRENCIES));

  process.stdout.write(
    `${REQUESTS} paid requests per tier and concurrency, ${ROUNDS} alternating rounds each, MOCK_FACILITATOR=true\n`,
  );
  for (const [i, concurrency] of CONCURRENCIES.entries()) {
    const results = await compare(url, batches[i], concurrency);
    for (const [tier, r] of Object.entries(results)) {
      process.stdout.write(
        `c=${String(concurrency).padEnd(3)} ${tier.padEnd(9)} ${r.rps.toFixed(0).padStart(6)} paid req/s   p50 ${r.p50.toFixed(2)} ms   p99 ${r.p99.toFixed(2)} ms   non-200: ${r.failures}   ` +
          `CPU µs/req: gateway ${r.cpu.gateway.toFixed(0)}, Postgres ${r.cpu.postgres.toFixed(0)}, NATS ${r.cpu.nats.toFixed(0)}, client ${r.cpu.client.toFixed(0)}\n`,
      );
    }
    process.stdout.write(
      `c=${String(concurrency).padEnd(3)} human tier adds ${(results.human.p50 - results.standard.p50).toFixed(2)} ms at p50\n`,
    );
  }
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
