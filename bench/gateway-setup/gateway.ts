// What the benchmarks that drive the payment gateway share: one fresh Postgres database and stream prefix per run,
// the services started as child processes from their sources, the attestations API's read model filled directly
// (one ownership record and one nullifier per agent), a gateway routes file with a standard and a human tier, and
// payment headers made as an x402 client makes them. Not a benchmark itself (no index.ts): bench/run.ts skips it.
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { migrations as attestationsMigrations, createReadModelSeeder } from "@humanpass/attestations-api";
import { createDb, dropDatabase, ensureDatabase, migrateToLatest } from "@humanpass/db";
import { applyTopologyAt, deletePrefixedStreams, jetstreamManager } from "@humanpass/event-bus";
import {
  createChallengeNonces,
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  extractHumanProofChallenge,
  signHumanProofChallengeEVMUnchecked,
} from "@humanpass/human-proof";
import { freePort } from "@humanpass/testing/ports";
import { type ServiceProcess, startServiceProcess } from "@humanpass/testing/service-process";
import { connect } from "@nats-io/transport-node";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

export const NETWORK = "eip155:45056";
export const USDC = "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9";

// The gateways get this key, so the bench can issue challenge nonces itself, as another replica would.
export const NONCE_KEY = "bench-gateway-challenge-nonce-key-0001";
const benchNonces = createChallengeNonces({ keys: [NONCE_KEY] });

/** The variables a gateway needs beside the common ones: mock facilitator, the routes file, the bench's nonce key. */
export function gatewayEnv(bench: GatewayBench, attestationsApiUrl: string): Record<string, string> {
  return {
    MOCK_FACILITATOR: "true",
    EVM_ADDRESS: "0x000000000000000000000000000000000000dEaD",
    ROUTES_FILE: bench.routesFile,
    ATTESTATIONS_API_URL: attestationsApiUrl,
    RATE_LIMIT_ENABLED: "false",
    NODE_ENV: "development",
    HUMAN_PROOF_NONCE_KEYS: NONCE_KEY,
  };
}

export interface GatewayBench {
  databaseUrl: string;
  natsUrl: string;
  prefix: string;
  routesFile: string;
  /** The services started, in order. */
  processes: ServiceProcess[];
  /** Starts `@humanpass/<service>/main` from its sources and resolves with its URL once `/readyz` answers 200. */
  startService(service: string, env: Record<string, string>, nodeArgs?: string[]): Promise<string>;
  /** Stops the services, then removes what the run created: its database, its streams and the routes file. */
  cleanUp(): Promise<void>;
}

/**
 * A fresh database named `bench_<name>_…` holding the attestations API's read model for `agents`, the streams
 * under a fresh prefix (created as the deployment's topology step does: services only wait for them), and the
 * routes file (`writeRoutesFile`).
 */
export async function prepareGatewayBench(name: string, agents: `0x${string}`[]): Promise<GatewayBench> {
  const dbUrl = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
  dbUrl.pathname = `/bench_${name}_${randomBytes(4).toString("hex")}`;
  const databaseUrl = dbUrl.toString();
  const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
  const prefix = `bench${randomBytes(4).toString("hex")}`;
  const routesFile = path.join(tmpdir(), `${prefix}-routes.json`);
  const processes: ServiceProcess[] = [];

  const startService = async (service: string, env: Record<string, string>, nodeArgs: string[] = []) => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const proc = await startServiceProcess({
      name: service,
      entry: `services/${service}/src/main.ts`,
      nodeArgs,
      url,
      env: {
        DATABASE_URL: databaseUrl,
        NATS_URL: natsUrl,
        EVENTS_PREFIX: prefix,
        LOG_LEVEL: "warn",
        PORT: String(port),
        HOST: "127.0.0.1",
        PUBLIC_URL: url,
        ...env,
      },
      log: (line) => process.stdout.write(`${service} | ${line}\n`),
      readyTimeoutMs: 90_000,
    });
    processes.push(proc);
    return url;
  };

  const cleanUp = async () => {
    await Promise.all(processes.map((p) => p.stop()));
    const nats = await connect({ servers: natsUrl });
    await deletePrefixedStreams(await jetstreamManager(nats), { prefix });
    await nats.close();
    await dropDatabase(databaseUrl);
    rmSync(routesFile, { force: true });
  };

  await ensureDatabase(databaseUrl);
  await applyTopologyAt(natsUrl, { prefix });
  await fillReadModel(databaseUrl, agents);
  writeRoutesFile(routesFile);
  return { databaseUrl, natsUrl, prefix, routesFile, processes, startService, cleanUp };
}

/**
 * A gateway routes file: `/bench` priced $0.01 in the standard tier and $0.001 in the human tier (the agent's
 * ownership attestation required, a million uses per human), in `usdc` on the devnet's network.
 */
export function writeRoutesFile(file: string, usdc: string = USDC): void {
  writeFileSync(
    file,
    JSON.stringify({
      assets: { [NETWORK]: { address: usdc, name: "USD Coin", version: "2", decimals: 6 } },
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
}

async function fillReadModel(databaseUrl: string, agents: `0x${string}`[]): Promise<void> {
  const db = createDb<any>({ connectionString: databaseUrl, schema: "attestations", max: 4 });
  await migrateToLatest(db, { schema: "attestations", migrations: attestationsMigrations });
  const seeder = createReadModelSeeder(db, { ownershipSchema: DEFAULT_AGENT_OWNERSHIP_SCHEMA });
  for (const [i, agent] of agents.entries()) {
    await seeder.pairAgent(agent, privateKeyToAccount(generatePrivateKey()).address, String(1_000_001 + i));
  }
  await db.destroy();
}

/** One payment header per request, as an x402 client (with our human-proof signing for the human tier) makes it. */
export async function paymentHeaders(
  url: string,
  keys: `0x${string}`[],
  human: boolean,
  count: number,
  usdc: string = USDC,
): Promise<string[]> {
  const unpaid = await fetch(url);
  const template = decodePaymentRequiredHeader(unpaid.headers.get("payment-required") as string);
  const clients = keys.map((key) => {
    const client = new x402Client((_v, accepts) => accepts[human ? 1 : 0]).setSpendControls({
      allowedAssets: [{ network: NETWORK, asset: usdc }],
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
      const issuedAt = Date.now();
      challenge.info.issuedAt = new Date(issuedAt).toISOString();
      challenge.info.nonce = benchNonces.issue({ domain, uri }, issuedAt);
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
