// human-proof peers: the same paid route with a standard and a discounted human tier, served in one run by
//   (a) Billions' published server SDK on Express (x402's `paymentMiddleware`; see billions-server.ts for the echo
//       workaround @x402/core 2.27 needs), uses counted in its process's memory,
//   (b) our SDK on Express (our-server.ts), uses, proof nonces and payment claims in Postgres,
//   (c) the payment gateway (services/payment-gateway, MOCK_FACILITATOR=true), as bench/payment-gateway runs it.
// All three verify payments with the same in-process mock facilitator (no chain) and ask the same attestations API
// (services/attestations-api, its read model seeded with one ownership record and one nullifier per agent).
// Payment headers are built before the clock: with Billions' client for (a), ours for (b) and (c) (a fresh
// challenge nonce per proof, as both enforce single use). Per concurrency, each server's tiers run in alternating
// rounds (standard, human, human, standard, …), the servers one after another within a round, so drift on a
// shared machine falls on all alike. CPU per request is read from /proc per process: the server, the
// attestations API, the Postgres backends of this run's database, every nats-server, and the load generator.
// A human tier's added cost is its CPU per request minus its own standard tier's, the median over the rounds.
//   BENCH_REQUESTS (default 1000) per server, tier and concurrency, BENCH_CONCURRENCY (default "1,16"),
//   BENCH_ROUNDS (default 4), BENCH_AGENTS (default 16).

import { loadavg } from "node:os";
import * as billionsClient from "@billionsnetwork/x402-human-proof-client";
import { sleep } from "@humanpass/retry";
import { freePort } from "@humanpass/testing/ports";
import { startServiceProcess } from "@humanpass/testing/service-process";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { type CpuReading, cpuBetween, namedCpuMs, processCpuMs } from "../gateway-setup/cpu.ts";
import {
  type GatewayBench,
  gatewayEnv,
  NETWORK,
  NONCE_KEY,
  paymentHeaders,
  prepareGatewayBench,
  USDC,
} from "../gateway-setup/gateway.ts";
import { loadFigures, median, type PaidLoad, sendPaid } from "../gateway-setup/paid-load.ts";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? "1,16").split(",").map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 16);

const TIERS = ["standard", "human"] as const;
type Tier = (typeof TIERS)[number];
const PARTS = ["server", "attestations", "postgres", "nats", "client"] as const;
type Cpu = Record<(typeof PARTS)[number], number>;
type Sample = PaidLoad & { cpu: Cpu };

interface Peer {
  name: string;
  url: string;
  pid: number;
  /** One payment header per request, built as this server's client builds them. */
  headers(human: boolean, count: number): Promise<string[]>;
}

let bench: GatewayBench | undefined;

/** One payment header per request as Billions' published client builds it (its proof a JSON string). */
async function billionsHeaders(url: string, keys: `0x${string}`[], human: boolean, count: number) {
  const template = decodePaymentRequiredHeader((await fetch(url)).headers.get("payment-required") as string);
  const agents = keys.map((key) => {
    const account = privateKeyToAccount(key);
    const client = new x402Client((_v, accepts) => accepts[human ? 1 : 0]).setSpendControls({
      allowedAssets: [{ network: NETWORK, asset: USDC }],
    });
    registerExactEvmScheme(client, { signer: account });
    const signer = {
      address: account.address,
      signMessage: (message: string) => account.signMessage({ message }),
    };
    return { client, signer };
  });
  const headers: string[] = [];
  for (let i = 0; i < count; i++) {
    const { client, signer } = agents[i % agents.length]!;
    const required: PaymentRequired = structuredClone(template);
    let payload: PaymentPayload = await client.createPaymentPayload(required);
    const challenge = billionsClient.extractHumanProofChallenge(required);
    if (human && challenge) {
      const proof = await billionsClient.signHumanProofChallengeEVM(challenge, signer, NETWORK);
      payload = { ...payload, extensions: { ...payload.extensions, "human-proof": proof } };
    }
    headers.push(encodePaymentSignatureHeader(payload));
  }
  return headers;
}

type Reading = CpuReading<keyof Cpu>;

// Postgres: only the backends of this run's database, as the server is shared with other work on the machine;
// NATS: every nats-server, shared too (only the gateway publishes).
function cpuNow(peer: Peer, attestationsPid: number): Reading {
  const { user, system } = process.cpuUsage();
  return {
    server: new Map([["server", processCpuMs(peer.pid)]]),
    attestations: new Map([["attestations", processCpuMs(attestationsPid)]]),
    postgres: namedCpuMs("postgres", new URL(bench!.databaseUrl).pathname.slice(1)),
    nats: namedCpuMs("nats-server", ""),
    client: new Map([["client", (user + system) / 1000]]),
  };
}

/** Sends `headers` to `peer` as paid requests, `concurrency` at a time, with the CPU they cost. */
async function run(
  peer: Peer,
  attestationsPid: number,
  headers: string[],
  concurrency: number,
): Promise<Sample> {
  const cpuBefore = cpuNow(peer, attestationsPid);
  const load = await sendPaid(`${peer.url}/bench`, headers, concurrency);
  // The gateway publishes its events after the responses: let its relay finish before reading CPU.
  await sleep(300);
  return { ...load, cpu: cpuBetween(cpuBefore, cpuNow(peer, attestationsPid)) };
}

function summary(samples: Sample[]) {
  const figures = loadFigures(samples);
  // µs of CPU per request, each process.
  const cpu = Object.fromEntries(
    PARTS.map((k) => [k, (samples.reduce((sum, s) => sum + s.cpu[k], 0) * 1000) / figures.requests]),
  ) as Cpu;
  return { ...figures, cpu, total: PARTS.reduce((sum, k) => sum + cpu[k], 0) };
}

/** Every peer's tiers at one concurrency, in alternating rounds. */
async function compare(
  peers: Peer[],
  attestationsPid: number,
  headers: Map<Peer, Record<Tier, string[]>>,
  concurrency: number,
) {
  const samples = new Map(peers.map((p) => [p, { standard: [] as Sample[], human: [] as Sample[] }]));
  const size = Math.ceil(headers.get(peers[0]!)!.standard.length / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    const order: Tier[] = round % 2 === 0 ? ["standard", "human"] : ["human", "standard"];
    for (const peer of peers) {
      for (const tier of order) {
        const batch = headers.get(peer)![tier].slice(round * size, (round + 1) * size);
        samples.get(peer)![tier].push(await run(peer, attestationsPid, batch, concurrency));
      }
    }
  }
  return peers.map((peer) => {
    const { standard, human } = samples.get(peer)!;
    // Each round's pair ran back to back, so its difference is the figure least moved by the host's other load.
    const rounds = human.map((h, round) => {
      const [hs, ss] = [summary([h]), summary([standard[round]!])];
      return { added: hs.total - ss.total, addedServer: hs.cpu.server - ss.cpu.server };
    });
    return {
      peer: peer.name,
      standard: summary(standard),
      human: summary(human),
      added: median(rounds.map((r) => r.added)),
      addedServer: median(rounds.map((r) => r.addedServer)),
      addedRounds: rounds.map((r) => r.added),
    };
  });
}

async function startExpressServer(
  name: string,
  entry: string,
  attestationsUrl: string,
): Promise<Peer["url"]> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = await startServiceProcess({
    name,
    entry: `bench/human-proof-peers/${entry}`,
    url,
    env: {
      DATABASE_URL: bench!.databaseUrl,
      PORT: String(port),
      PUBLIC_URL: url,
      ATTESTATIONS_API_URL: attestationsUrl,
      NETWORK,
      USDC,
      NONCE_KEY,
    },
    log: (line) => process.stdout.write(`${name} | ${line}\n`),
    readyTimeoutMs: 90_000,
  });
  bench!.processes.push(proc);
  return url;
}

const f0 = (x: number) => x.toFixed(0);

async function main() {
  const keys = Array.from({ length: AGENTS }, () => generatePrivateKey());
  bench = await prepareGatewayBench(
    "human_proof_peers",
    keys.map((k) => privateKeyToAccount(k).address),
  );
  const attestations = await bench.startService("attestations-api", { RATE_LIMIT_ENABLED: "false" });
  const gateway = await bench.startService("payment-gateway", gatewayEnv(bench, attestations));
  const billions = await startExpressServer("billions-sdk", "billions-server.ts", attestations);
  const ours = await startExpressServer("our-sdk", "our-server.ts", attestations);
  const pidOf = (url: string) => bench!.processes.find((p) => p.url === url)!.child.pid!;
  const attestationsPid = pidOf(attestations);
  const peers: Peer[] = [
    {
      name: "Billions' SDK, Express",
      url: billions,
      pid: pidOf(billions),
      headers: (human, count) => billionsHeaders(`${billions}/bench`, keys, human, count),
    },
    {
      name: "our SDK, Express",
      url: ours,
      pid: pidOf(ours),
      headers: (human, count) => paymentHeaders(`${ours}/bench`, keys, human, count),
    },
    {
      name: "payment gateway",
      url: gateway,
      pid: pidOf(gateway),
      headers: (human, count) => paymentHeaders(`${gateway}/bench`, keys, human, count),
    },
  ];
  const prepare = async (count: number) => {
    const headers = new Map<Peer, Record<Tier, string[]>>();
    for (const peer of peers)
      headers.set(peer, {
        standard: await peer.headers(false, count),
        human: await peer.headers(true, count),
      });
    return headers;
  };

  process.stdout.write(`preparing payments (${AGENTS} agents), warming up…\n`);
  await compare(peers, attestationsPid, await prepare(200), Math.max(...CONCURRENCIES));

  process.stdout.write(
    `${REQUESTS} paid requests per server, tier and concurrency, ${ROUNDS} alternating rounds each; mock facilitator\n`,
  );
  const loadBefore = loadavg();
  const results = [];
  for (const concurrency of CONCURRENCIES) {
    // Made just before their level: on a busy host the last level's would outlive their validity while the
    // first runs.
    for (const r of await compare(peers, attestationsPid, await prepare(REQUESTS), concurrency)) {
      results.push({ concurrency, ...r });
      for (const tier of TIERS) {
        const s = r[tier];
        process.stdout.write(
          `c=${String(concurrency).padEnd(3)} ${r.peer.padEnd(23)} ${tier.padEnd(9)} ${s.rps.toFixed(0).padStart(5)} req/s   p50 ${s.p50.toFixed(2)} ms   p99 ${s.p99.toFixed(2)} ms   non-200: ${s.failures}   ` +
            `CPU µs/req: server ${f0(s.cpu.server)}, attestations-api ${f0(s.cpu.attestations)}, Postgres ${f0(s.cpu.postgres)}, NATS ${f0(s.cpu.nats)}, client ${f0(s.cpu.client)} (total ${f0(s.total)})\n`,
        );
      }
      process.stdout.write(
        `c=${String(concurrency).padEnd(3)} ${r.peer.padEnd(23)} human tier adds ${f0(r.added)} µs CPU per request (server ${f0(r.addedServer)}); median of the rounds: ${r.addedRounds.map(f0).join(", ")}\n`,
      );
    }
  }
  process.stdout.write(
    `load average (1 min) before ${loadBefore[0]!.toFixed(2)}, after ${loadavg()[0]!.toFixed(2)}\n`,
  );
  if (process.env.BENCH_JSON) process.stdout.write(`RESULT ${JSON.stringify(results)}\n`);
}

main()
  .catch((error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : error}\n`);
    process.exitCode = 1;
  })
  .finally(() => bench?.cleanUp());
