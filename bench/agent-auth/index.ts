// agent-auth, direct path end to end: GET /api/v1/challenge → EIP-191 signature → POST /api/v1/claim, against the
// real service (its main.ts, as a child process) and the real attestations API (also a child process), both on one
// fresh Postgres database, with their streams on NATS. The API's read model is filled through its own consumers
// (schema, ownership records, nullifiers as events), as in production.
// Prints claims/s and the p50/p99 of one whole claim, with the lookup cache on (default) and off (every claim
// reads the API: list + nullifier), at several numbers of agents claiming at once: with a fixed number of
// clients, latency is that number over throughput (Little's law), so one level alone cannot show both.
// The agents talk plain HTTP/1.1 keep-alive (node:http), the lightest client, because they share the two cores
// with the services they measure.
//   BENCH_SECONDS (default 10) per level, BENCH_CONCURRENCY (default 8,16,32), BENCH_AGENTS (default 64),
//   BENCH_PROFILE_DIR (the services write V8 CPU profiles there).
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import { dropDatabase, ensureDatabase } from "@humanpass/db";
import {
  connectNats,
  createCloudEvent,
  deletePrefixedStreams,
  ensureStreams,
  jetstreamManager,
  STREAMS,
  type StreamName,
  streamName,
  subjectOf,
} from "@humanpass/event-bus";
import { didFromAddress, iden3IdFromAddress } from "@humanpass/identity";
import { sleep } from "@humanpass/retry";
import { freePort } from "@humanpass/testing/ports";
import { type ServiceProcess, startServiceProcess } from "@humanpass/testing/service-process";
import { jetstream } from "@nats-io/jetstream";
import pino from "pino";
import { bytesToHex, encodeAbiParameters, getAddress, type Hex, hashMessage, hexToBytes } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const LEVELS = (process.env.BENCH_CONCURRENCY ?? "8,16,32").split(",").map(Number);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 64);
const logger = pino({ level: "warn" });

const dbUrl = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
dbUrl.pathname = `/bench_agent_auth_${randomBytes(4).toString("hex")}`;
const databaseUrl = dbUrl.toString();
const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const prefix = `bench${randomBytes(4).toString("hex")}`;
const topology = { prefix };

const hex32 = () => `0x${randomBytes(32).toString("hex")}`;
const position = (n: number) => ({
  chainId: 45056,
  blockNumber: n,
  blockHash: hex32(),
  logIndex: 0,
  txHash: hex32(),
});
const REGISTRY = getAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3");

/** The documented API of the `secp256k1` package (libsecp256k1's prebuilt binding). */
type Secp256k1 = { ecdsaSign(hash: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number } };
const secp256k1 = createRequire(import.meta.url)("secp256k1") as Secp256k1;

/**
 * An agent's EIP-191 signer, through libsecp256k1 rather than viem: in production agents sign on their own
 * machines, here they share the two cores with the service they measure.
 */
function agentSigner(privateKey: Hex) {
  const account = privateKeyToAccount(privateKey);
  const key = hexToBytes(privateKey);
  return {
    address: account.address,
    async signMessage(message: string): Promise<Hex> {
      const { signature, recid } = secp256k1.ecdsaSign(hexToBytes(hashMessage(message)), key);
      return `${bytesToHex(signature)}${(27 + recid).toString(16)}` as Hex;
    },
  };
}

const profileArgs = process.env.BENCH_PROFILE_DIR
  ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`]
  : [];
const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(...LEVELS) * 2 });

/** One request over the agents' keep-alive connections; resolves with the status and the parsed JSON body. */
function call(url: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      url,
      {
        agent,
        method: payload ? "POST" : "GET",
        headers: payload
          ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }
          : {},
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
          } catch (e) {
            reject(e);
          }
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

const services: ServiceProcess[] = [];

/** `@humanpass/<name>/main` from its sources; resolves once /readyz answers 200. */
async function startService(
  name: string,
  env: Record<string, string> & { PORT: string },
): Promise<ServiceProcess> {
  const service = await startServiceProcess({
    name,
    entry: `services/${name}/src/main.ts`,
    nodeArgs: profileArgs,
    url: `http://127.0.0.1:${env.PORT}`,
    env: { DATABASE_URL: databaseUrl, NATS_URL: natsUrl, EVENTS_PREFIX: prefix, LOG_LEVEL: "warn", ...env },
  });
  services.push(service);
  return service;
}

async function until<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** CPU time (user + system) a process has used, in ms, from /proc (Linux); undefined elsewhere. */
function cpuMs(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

await ensureDatabase(databaseUrl);
const nats = await connectNats(natsUrl, logger);
await ensureStreams(await jetstreamManager(nats), topology, ["CHAIN", "VERIFIER", "AGENT_AUTH"]);
const js = jetstream(nats);
const publish = async (stream: StreamName, type: string, data: unknown) => {
  const event = createCloudEvent({ source: STREAMS[stream].source, type, data });
  await js.publish(subjectOf(topology, stream, type), JSON.stringify(event), { msgID: event.id });
};

try {
  // The attestations API, filled with AGENTS agents, each paired with its own human.
  const apiPort = await freePort();
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  await startService("attestations-api", {
    PORT: String(apiPort),
    HOST: "127.0.0.1",
    RATE_LIMIT_ENABLED: "false",
  });

  const schemaId = hex32();
  const relay = privateKeyToAccount(generatePrivateKey()).address;
  await publish("CHAIN", "schema_registered", {
    schemaId,
    name: "AgentOwnership",
    schema: "bytes data",
    resolver: "0x0000000000000000000000000000000000000000",
    revocable: true,
    registerer: relay,
    registererIden3Id: iden3IdFromAddress(relay),
    registry: REGISTRY,
    blockTimestamp: 1_760_000_000,
    ...position(1),
  });
  const agents = Array.from({ length: AGENTS }, () => agentSigner(generatePrivateKey()));
  for (const [i, agent] of agents.entries()) {
    const human = privateKeyToAccount(generatePrivateKey()).address;
    await publish("VERIFIER", "uniqueness_verified", {
      sessionId: i,
      nullifier: BigInt(hex32()).toString(),
      nullifierSessionId: "1",
      userDid: didFromAddress(human),
      userId: iden3IdFromAddress(human),
      verifiedAt: new Date().toISOString(),
    });
    await publish("CHAIN", "attestation_recorded", {
      attestationId: hex32(),
      schemaId,
      creationTime: 1_760_000_000 + i,
      expirationTime: 0,
      revocationTime: 0,
      attesterDid: didFromAddress(human),
      attesterIden3Id: iden3IdFromAddress(human),
      attesterEthereumAddress: relay,
      recipientDid: didFromAddress(agent.address),
      recipientIden3Id: iden3IdFromAddress(agent.address),
      recipientEthereumAddress: agent.address,
      revocable: true,
      refId: `0x${"0".repeat(64)}`,
      data: encodeAbiParameters([{ type: "bytes" }], ["0x"]),
      registry: REGISTRY,
      ...position(2 + i),
    });
  }
  await until("the API to list every pairing", async () => {
    const res = await fetch(`${apiUrl}/api/v1/attestations?schemaId=${schemaId}&page_size=1`);
    return res.ok && ((await res.json()) as { totalItems: number }).totalItems === AGENTS;
  });

  const results: string[] = [];
  for (const cache of [true, false]) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const service = await startService("agent-auth", {
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_URL: "https://agents.bench.example",
      ATTESTATIONS_API_URL: apiUrl,
      OWNERSHIP_SCHEMA_ID: schemaId,
      ATTESTATION_CACHE_TTL_MS: cache ? "30000" : "0",
      RATE_LIMIT_MAX: "1000000000",
      DB_POOL_MAX: "20",
    });

    const claim = async (n: number): Promise<number> => {
      const signer = agents[n % agents.length]!;
      const started = performance.now();
      const challenge = await call(`${url}/api/v1/challenge`);
      const { nonce, message } = challenge.body as { nonce: string; message: string };
      const signature = await signer.signMessage(message);
      const res = await call(`${url}/api/v1/claim`, { nonce, signature });
      if (res.status !== 200 || !res.body.verified)
        throw new Error(`claim refused: ${res.status} ${res.body.error}`);
      return performance.now() - started;
    };

    // Warm-up: every agent once (fills the cache when it is on), then a measured run per level.
    for (let i = 0; i < agents.length; i += 16) {
      await Promise.all(agents.slice(i, i + 16).map((_, j) => claim(i + j)));
    }
    for (const concurrency of LEVELS) {
      const latencies: number[] = [];
      let failures = 0;
      let next = 0;
      const cpuBefore = cpuMs(service.child.pid);
      const started = performance.now();
      const deadline = started + SECONDS * 1000;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (performance.now() < deadline) {
            try {
              latencies.push(await claim(next++));
            } catch (e) {
              failures++;
              if (failures < 5) process.stderr.write(`${(e as Error).message}\n`);
            }
          }
        }),
      );
      const elapsed = (performance.now() - started) / 1000;
      const cpuAfter = cpuMs(service.child.pid);
      const cpuPerClaim =
        cpuBefore === undefined || cpuAfter === undefined
          ? ""
          : `, agent-auth CPU ${((cpuAfter - cpuBefore) / latencies.length).toFixed(2)} ms/claim`;
      latencies.sort((a, b) => a - b);
      results.push(
        `cache ${cache ? "on " : "off"}, ${String(concurrency).padStart(2)} at once: ${(latencies.length / elapsed).toFixed(0)} claims/s, ` +
          `p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms ` +
          `(${latencies.length} claims in ${elapsed.toFixed(1)} s, ${failures} failed${cpuPerClaim})`,
      );
      process.stdout.write(`${results.at(-1)}\n`);
    }
    await service.stop();
  }

  const events = await (await jetstreamManager(nats)).streams.info(streamName(topology, "AGENT_AUTH"));
  process.stdout.write(
    `agent-auth direct path, end to end (challenge, sign, claim), ${AGENTS} paired agents:\n  ${results.join("\n  ")}\n` +
      `  events published to ${streamName(topology, "AGENT_AUTH")}: ${events.state.messages}\n`,
  );
} finally {
  for (const service of services) await service.stop();
  await deletePrefixedStreams(await jetstreamManager(nats), { prefix });
  await nats.close();
  await dropDatabase(databaseUrl);
}
