// End-to-end latencies on the stack `make up` runs (tools/stack: a devnet, the six services as processes from their
// bundles, the machine's Postgres and NATS, under a fresh database and stream prefix), the devnet mining one block
// every BENCH_BLOCK_SECONDS (default 1) and nothing in between (automine off, as a live chain):
// - chain → API: an attestation's block first seen on the node → `GET /api/v1/attestations/{id}` answers 200;
// - revocation → refusal: a revocation's block first seen → the human tier of each of two extra gateway replicas
//   (same database and streams, MOCK_FACILITATOR=true so that the discounted requests before it cost no chain
//   transaction) refuses that human's agent; the sample is the later of the two replicas.
// "First seen" is a poll of the node's block number every BENCH_POLL_MS (default 10), as is each probe of the API
// and the gateways, so each figure is late by up to that much. Samples run BENCH_LANES at a time (default 3, one
// per demo human: the attester of a lane's pairings), each a fresh agent.
// - claim → subscriber: agent-auth's answer to a direct-path claim (POST /api/v1/claim, 200) → its
//   `agent_auth.human_verified` handed to a durable consumer of `@humanpass/events` (`subscribe`), the claims sent at
//   BENCH_CLAIM_RATE (default 100) per second, each by its own freshly paired agent, signed before the clock starts.
//   The issue asks for the verifier's callback; on this stack no wallet token verifies (no Billions network, the
//   fixture tokens answer another request), and the verifier's event is `uniqueness_verified`: agent-auth's claim is
//   the path that ends in `human_verified` here, through the same outbox relay and JetStream.
//   BENCH_SAMPLES (default 200) per path, BENCH_PATHS (default "chain,claims": "chain" is the first two).
// Needs the bundles (`make build`).

import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { dropDatabase } from "@humanpass/db";
import {
  ABIs,
  AGENT_OWNERSHIP_SCHEMA,
  encodeSchemaData,
  type Identity,
  identityFromAddress,
  recordAttestations,
  setAutomine,
} from "@humanpass/devnet";
import { deletePrefixedStreams, jetstreamManager } from "@humanpass/event-bus";
import { subscribe } from "@humanpass/events";
import { sleep } from "@humanpass/retry";
import { randomPrefix, type Stack, startStack } from "@humanpass/stack";
import { freePort } from "@humanpass/testing/ports";
import { type ServiceProcess, startServiceProcess } from "@humanpass/testing/service-process";
import { connect } from "@nats-io/transport-node";
import { type Hex, parseEventLogs, zeroHash } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { NONCE_KEY, paymentHeaders, writeRoutesFile } from "../gateway-setup/gateway.ts";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const BLOCK_SECONDS = Number(process.env.BENCH_BLOCK_SECONDS ?? 1);
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 10);
const LANES = Number(process.env.BENCH_LANES ?? 3);
// Discounted requests a replica may still grant after a revocation before the bench gives up on the sample.
const PROBES = Number(process.env.BENCH_PROBES ?? 60);
const PROBE_MS = Number(process.env.BENCH_PROBE_MS ?? 20);
const CLAIM_RATE = Number(process.env.BENCH_CLAIM_RATE ?? 100);
const PATHS = (process.env.BENCH_PATHS ?? "chain,claims").split(",");

const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const dbUrl = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
dbUrl.pathname = `/bench_e2e_${randomBytes(4).toString("hex")}`;
const databaseUrl = dbUrl.toString();
const prefix = randomPrefix();
const routesFile = path.join(tmpdir(), `${prefix}-routes.json`);

let stack: Stack | undefined;
const replicas: ServiceProcess[] = [];

/** When this process first saw each block number, from a poll of the node. */
class BlockClock {
  private readonly seen = new Map<bigint, number>();
  private last = -1n;
  private running = true;
  private readonly loop: Promise<void>;
  private readonly s: Stack;
  constructor(s: Stack) {
    this.s = s;
    this.loop = this.run();
  }
  private async run() {
    while (this.running) {
      const n = await this.s.devnet.client.getBlockNumber({ cacheTime: 0 });
      // A poll late by more than a block skips numbers: they were mined by now, which is all this poll knows.
      for (let m = n; m > this.last; m--) this.seen.set(m, performance.now());
      this.last = n;
      await sleep(POLL_MS);
    }
  }
  async minedAt(n: bigint): Promise<number> {
    for (;;) {
      const t = this.seen.get(n);
      if (t !== undefined) return t;
      await sleep(POLL_MS);
    }
  }
  async stop() {
    this.running = false;
    await this.loop;
  }
}

/** Sends a transaction and resolves with its receipt once mined (the next interval block), not failing it. */
async function mined(s: Stack, hash: Hex) {
  const receipt = await s.devnet.client.waitForTransactionReceipt({ hash, pollingInterval: POLL_MS * 5 });
  if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`);
  return receipt;
}

async function pair(s: Stack, clock: BlockClock, human: Identity, agent: Identity) {
  const hash = await s.devnet.client.writeContract({
    address: s.devnet.addresses.attestationRegistry,
    abi: ABIs.attestationRegistry,
    functionName: "recordAttestation",
    args: [
      {
        schemaId: s.seed.schemas.agentOwnership,
        attester: { did: human.did, iden3Id: human.iden3Id, ethereumAddress: human.ethereumAddress },
        recipient: { did: agent.did, iden3Id: agent.iden3Id, ethereumAddress: agent.ethereumAddress },
        expirationTime: 0n,
        revocable: true,
        refId: zeroHash,
        data: encodeSchemaData(AGENT_OWNERSHIP_SCHEMA.schema, ["0x"]),
      },
    ],
    account: human.ethereumAddress,
    chain: null,
  });
  const receipt = await mined(s, hash);
  const [event] = parseEventLogs({
    abi: ABIs.attestationRegistry,
    logs: receipt.logs,
    eventName: "AttestationRecorded",
  });
  return { id: event!.args.id, minedAt: await clock.minedAt(receipt.blockNumber) };
}

async function revoke(s: Stack, clock: BlockClock, human: Identity, id: Hex) {
  const hash = await s.devnet.client.writeContract({
    address: s.devnet.addresses.attestationRegistry,
    abi: ABIs.attestationRegistry,
    functionName: "revokeAttestation",
    args: [id],
    account: human.ethereumAddress,
    chain: null,
  });
  return clock.minedAt((await mined(s, hash)).blockNumber);
}

async function visibleAt(api: string, id: Hex): Promise<number> {
  for (;;) {
    const response = await fetch(`${api}/api/v1/attestations/${id}`);
    await response.arrayBuffer();
    if (response.status === 200) return performance.now();
    await sleep(POLL_MS);
  }
}

/** Sends `headers` one by one (PROBE_MS apart) until the replica refuses one: the time of that answer. */
async function refusedAt(url: string, headers: string[]): Promise<number | undefined> {
  for (const header of headers) {
    const response = await fetch(url, { headers: { "payment-signature": header } });
    await response.arrayBuffer();
    if (response.status !== 200) return performance.now();
    await sleep(PROBE_MS);
  }
  return undefined;
}

function percentiles(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { n: sorted.length, p50: at(0.5), p95: at(0.95), p99: at(0.99), max: sorted.at(-1)! };
}

/** Percentiles in ms; for a path that starts at a block, also beside the block interval. */
function report(name: string, values: number[], goals: string, afterBlock = true) {
  if (values.length === 0) return void process.stdout.write(`${name.padEnd(22)} no samples\n`);
  const p = percentiles(values);
  const block = BLOCK_SECONDS * 1000;
  const digits = afterBlock ? 0 : 1;
  process.stdout.write(
    `${name.padEnd(22)} n=${p.n}  p50 ${p.p50.toFixed(digits)} ms  p95 ${p.p95.toFixed(digits)} ms  p99 ${p.p99.toFixed(digits)} ms  max ${p.max.toFixed(digits)} ms  (` +
      (afterBlock
        ? `block interval ${block} ms; p50 − interval ${(p.p50 - block).toFixed(0)} ms, p99 − interval ${(p.p99 - block).toFixed(0)} ms; `
        : "") +
      `goal ${goals})\n`,
  );
}

async function main() {
  process.stdout.write(`starting the stack (devnet, six services) under ${prefix} …\n`);
  stack = await startStack({
    databaseUrl,
    natsUrl,
    prefix,
    ports: "free",
    blockIntervalSeconds: BLOCK_SECONDS,
    logLevel: "warn",
    // 100 claims a second from one address are a load test, not abuse.
    env: { "agent-auth": { RATE_LIMIT_MAX: "100000" } },
    log: (service, line) => process.stdout.write(`${service} | ${line}\n`),
  });
  const s = stack;
  await setAutomine(s.devnet, false);
  const clock = new BlockClock(s);
  const api = s.urls["attestations-api"];

  writeRoutesFile(routesFile, s.devnet.addresses.usdc);
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const replica = await startServiceProcess({
      name: `payment-gateway-${i + 1}`,
      entry: "services/payment-gateway/dist/service.js",
      env: {
        ...s.environments["payment-gateway"],
        PORT: String(port),
        PUBLIC_URL: url,
        ROUTES_FILE: routesFile,
        MOCK_FACILITATOR: "true",
        RATE_LIMIT_ENABLED: "false",
        HUMAN_PROOF_NONCE_KEYS: NONCE_KEY,
      },
      url,
      log: (line) => process.stdout.write(`payment-gateway-${i + 1} | ${line}\n`),
    });
    replicas.push(replica);
  }

  const loadBefore = loadavg();
  if (PATHS.includes("chain")) await chainPaths(s, clock, api);
  if (PATHS.includes("claims")) await claimPath(s);
  await clock.stop();
  process.stdout.write(
    `load average (1 min) before ${loadBefore[0]!.toFixed(2)}, after ${loadavg()[0]!.toFixed(2)}\n`,
  );
}

async function chainPaths(s: Stack, clock: BlockClock, api: string) {
  const humans = s.seed.humans.slice(0, LANES);
  const chainToApi: number[] = [];
  const revocationToRefusal: number[] = [];
  const perReplica: number[][] = [[], []];
  let skipped = 0;
  const started = performance.now();
  let next = 0;
  await Promise.all(
    humans.map(async (human) => {
      while (next < SAMPLES) {
        next++;
        const key = generatePrivateKey();
        const agent = identityFromAddress(privateKeyToAccount(key).address);
        const { id, minedAt } = await pair(s, clock, human, agent);
        chainToApi.push((await visibleAt(api, id)) - minedAt);

        // The discount before the revocation, on both replicas (each caches the human it found).
        const headers = await Promise.all(
          replicas.map((r) =>
            paymentHeaders(`${r.url}/bench`, [key], true, PROBES + 1, s.devnet.addresses.usdc),
          ),
        );
        const before = await Promise.all(
          replicas.map((r, i) =>
            fetch(`${r.url}/bench`, { headers: { "payment-signature": headers[i]![0]! } }),
          ),
        );
        await Promise.all(before.map((r) => r.arrayBuffer()));
        if (before.some((r) => r.status !== 200)) {
          skipped++;
          continue;
        }
        const revokedAt = await revoke(s, clock, human, id);
        const refused = await Promise.all(
          replicas.map((r, i) => refusedAt(`${r.url}/bench`, headers[i]!.slice(1))),
        );
        if (refused.some((t) => t === undefined)) {
          skipped++;
          continue;
        }
        refused.forEach((t, i) => perReplica[i]!.push(t! - revokedAt));
        revocationToRefusal.push(Math.max(...refused.map((t) => t!)) - revokedAt);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const block = BLOCK_SECONDS * 1000;
  process.stdout.write(
    `\n${SAMPLES} samples per path, ${humans.length} lanes, ${seconds.toFixed(0)} s; block interval ${block} ms, automine off; ` +
      `poll ${POLL_MS} ms, probe every ${PROBE_MS} ms` +
      (skipped
        ? `; ${skipped} revocation samples skipped (no discount before, or no refusal within ${PROBES} probes)`
        : "") +
      "\n",
  );
  report("chain → API", chainToApi, `p50 ≤ ${block + 250} ms, p99 ≤ ${block + 1000} ms`);
  report("revocation → refusal", revocationToRefusal, `p99 ≤ ${block + 1000} ms (both replicas)`);
  for (const [i, values] of perReplica.entries()) report(`  replica ${i + 1} alone`, values, "–");
}

async function claimPath(s: Stack) {
  const agentAuth = s.urls["agent-auth"];
  const keys = Array.from({ length: SAMPLES }, () => generatePrivateKey());
  const agents = keys.map((k) => identityFromAddress(privateKeyToAccount(k).address));
  const humans = s.seed.humans;
  // Grouped by attester, so that each human's pairings share transactions.
  const order = agents.map((agent, i) => ({ agent, human: humans[i % humans.length]! }));
  order.sort((a, b) => humans.indexOf(a.human) - humans.indexOf(b.human));
  const paired = await recordAttestations(
    s.devnet,
    order.map(({ agent, human }) => ({
      schemaId: s.seed.schemas.agentOwnership,
      attester: human,
      recipient: agent,
      data: encodeSchemaData(AGENT_OWNERSHIP_SCHEMA.schema, ["0x"]),
    })),
  );
  for (const { id } of paired) await visibleAt(s.urls["attestations-api"], id);
  const claims = await Promise.all(
    keys.map(async (key) => {
      const { nonce, message } = (await (await fetch(`${agentAuth}/api/v1/challenge`)).json()) as {
        nonce: string;
        message: string;
      };
      const account = privateKeyToAccount(key);
      return {
        did: identityFromAddress(account.address).did,
        body: JSON.stringify({ nonce, signature: await account.signMessage({ message }) }),
      };
    }),
  );

  const delivered = new Map<string, number>();
  const nc = await connect({ servers: natsUrl });
  const subscription = await subscribe(nc, {
    stream: "AGENT_AUTH",
    type: "human_verified",
    durable: `bench_${randomBytes(4).toString("hex")}`,
    topology: { prefix },
    startAt: new Date(),
    handler: async (event) => {
      if (event.data.agentDid) delivered.set(event.data.agentDid, performance.now());
    },
  });
  const answered = new Map<string, number>();
  const failures = new Map<number, number>();
  const started = performance.now();
  await Promise.all(
    claims.map(async ({ did, body }, i) => {
      await sleep(started + (i * 1000) / CLAIM_RATE - performance.now());
      const response = await fetch(`${agentAuth}/api/v1/claim`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      await response.arrayBuffer();
      if (response.status === 200) answered.set(did, performance.now());
      else failures.set(response.status, (failures.get(response.status) ?? 0) + 1);
    }),
  );
  const sent = (performance.now() - started) / 1000;
  const deadline = performance.now() + 30_000;
  while ([...answered.keys()].some((did) => !delivered.has(did)) && performance.now() < deadline)
    await sleep(20);
  await subscription.stop();
  await nc.close();
  const latencies = [...answered]
    .filter(([did]) => delivered.has(did))
    .map(([did, t]) => delivered.get(did)! - t);
  process.stdout.write(
    `\n${claims.length} claims at ${CLAIM_RATE}/s (sent in ${sent.toFixed(1)} s), ${answered.size} answered 200, others ${JSON.stringify(Object.fromEntries(failures))}, ` +
      `${latencies.length} delivered\n`,
  );
  report("claim → subscriber", latencies, "p99 ≤ 100 ms at 100/s", false);
}

async function cleanUp() {
  await Promise.all(replicas.map((r) => r.stop()));
  await stack?.stop();
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
