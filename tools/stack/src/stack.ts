import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ensureDatabase } from "@humanpass/db";
import { type DemoSeed, type Devnet, mine, seedDemo, startDevnet } from "@humanpass/devnet";
import { applyTopologyAt, type SubscriberGrant, TOPOLOGY_USER } from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import { freePort } from "@humanpass/testing/ports";
import { REPO_ROOT, type ServiceProcess, startServiceProcess } from "@humanpass/testing/service-process";
import { buildStack, type Part } from "@humanpass/testing/stack";
import { recordDemoHumans } from "./demo-humans.ts";
import { type DevnetFacilitator, startDevnetFacilitator } from "./facilitator.ts";

export type LogSink = (service: string, line: string) => void;

export const SERVICE_NAMES = [
  "chain-indexer",
  "attestations-api",
  "verifier",
  "agent-auth",
  "payment-gateway",
  "webhooks",
] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export const DEFAULT_PORTS: Record<ServiceName, number> = {
  verifier: 8080,
  "attestations-api": 8081,
  "agent-auth": 8082,
  "chain-indexer": 8083,
  "payment-gateway": 4021,
  webhooks: 8084,
};

/** The webhooks admin API's bearer token under `make up` and in tests: development only, printed by make up. */
export const DEV_WEBHOOKS_ADMIN_TOKEN = "development-only-webhooks-admin-token-0001";

/** The devnet's x402 facilitator HTTP API under `make up`. */
export const DEFAULT_FACILITATOR_PORT = 4022;

/** The campaign of the demo: the nullifier session every demo human verified under. */
export const DEMO_NULLIFIER_SESSION_ID = "20261122";

export interface StackOptions {
  /** Every service's schema lives in this one database (created when missing). */
  databaseUrl: string;
  natsUrl: string;
  /**
   * Where the server has the users of users.conf (make up's, `startLocalNats`): their passwords. Each service then
   * connects as its own user, and the topology step runs as `topology`, creating the `natsSubscribers`' copies too.
   */
  natsPasswords?: (user: string) => string;
  natsSubscribers?: SubscriberGrant[];
  /** Subject/stream prefix; empty for the real names. */
  prefix?: string;
  /** Fixed ports (make up) or free ones (tests, the default). */
  ports?: "default" | "free";
  devnetPort?: number;
  /** Interface the devnet facilitator listens on (default 127.0.0.1). */
  facilitatorHost?: string;
  /** An empty devnet block at this interval, as a live chain grows (make up); none by default, as tests want. */
  blockIntervalSeconds?: number;
  log: LogSink;
  logLevel?: string;
  otlpEndpoint?: string;
  /** Extra variables per service, e.g. a test's policy switch. */
  env?: Partial<Record<ServiceName, Record<string, string>>>;
}

export interface Stack {
  devnet: Devnet;
  seed: DemoSeed;
  /** The x402 facilitator HTTP API settling on the devnet, for integrators' servers. */
  facilitator: DevnetFacilitator;
  humans: { did: string; userId: string; nullifier: string }[];
  urls: Record<ServiceName, string>;
  prefix: string;
  processes: Record<ServiceName, ServiceProcess>;
  /** The variables each service was started with (benchmarks start more of them). */
  environments: Record<ServiceName, Record<string, string>>;
  stop(): Promise<void>;
}

/**
 * Starts everything `make up` runs: a devnet with the registries and demo pairings, the six services as their
 * own processes (each migrating its schema at start-up), and demo humans recorded through the verifier's event
 * path; resolves once the attestations API serves every demo pairing with its human's nullifier.
 */
export async function startStack(options: StackOptions): Promise<Stack> {
  const prefix = options.prefix ?? "";
  const launch = (name: ServiceName): Part<{ config: Configuration }, ServiceProcess> => ({
    start: ({ config }) =>
      startServiceProcess({
        name,
        entry: `services/${name}/dist/service.js`,
        env: config.environments[name],
        url: config.urls[name],
        log: (line) => options.log(name, line),
      }),
    stop: (proc) => proc.stop(),
  });
  const stack = await buildStack()
    // Accounts: 0 deploys, 1-3 are humans, 4-7 their agents, 8 settles the gateway's payments, 9 receives them,
    // 10-11 are agents with no human behind them, 12 settles for the facilitator HTTP API; 0-11 hold test USDC.
    .add("devnet", {
      start: () =>
        startDevnet({
          port: options.devnetPort ?? 0,
          usdcAccounts: 12,
          blockIntervalSeconds: options.blockIntervalSeconds,
        }),
      stop: (devnet) => devnet.stop(),
    })
    .add("facilitator", {
      start: async ({ devnet }) =>
        startDevnetFacilitator(devnet, {
          port: options.ports === "default" ? DEFAULT_FACILITATOR_PORT : await freePort(),
          host: options.facilitatorHost ?? "127.0.0.1",
          settler: 12,
        }),
      stop: (facilitator) => facilitator.stop(),
    })
    .add("seed", async ({ devnet }) => {
      const seed = await seedDemo(devnet);
      // The indexer emits blocks one confirmation deep; these make the last seeded block final.
      await mine(devnet, 2);
      return seed;
    })
    .add("config", async ({ devnet, seed }) => {
      await ensureDatabase(options.databaseUrl);
      const config = await configure(options, prefix, devnet, seed);
      // What the migrations step does in a deployment: services only wait for their streams, they may not create them.
      await applyTopologyAt(
        options.natsUrl,
        { prefix },
        options.natsPasswords
          ? {
              user: TOPOLOGY_USER,
              pass: options.natsPasswords(TOPOLOGY_USER),
              subscribers: options.natsSubscribers,
            }
          : {},
      );
      return config;
    })
    .add("chain-indexer", launch("chain-indexer"))
    .beside("verifier", launch("verifier"))
    .add("attestations-api", launch("attestations-api"))
    .add("agent-auth", launch("agent-auth"))
    .beside("payment-gateway", launch("payment-gateway"))
    // It follows every stream, so it starts once all four producers have created theirs.
    .add("webhooks", launch("webhooks"))
    .add("humans", async ({ seed, config }) => {
      const humans = await recordDemoHumans({
        databaseUrl: options.databaseUrl,
        prefix,
        nullifierSessionId: DEMO_NULLIFIER_SESSION_ID,
        humans: seed.humans,
      });
      await waitForDemoData(config.urls["attestations-api"], seed);
      return humans;
    })
    .start();
  const { devnet, seed, facilitator, humans, config } = stack;
  const processes = Object.fromEntries(SERVICE_NAMES.map((n) => [n, stack[n]])) as Record<
    ServiceName,
    ServiceProcess
  >;
  return {
    devnet,
    seed,
    facilitator,
    humans,
    urls: config.urls,
    prefix,
    processes,
    environments: config.environments,
    stop: stack.close,
  };
}

interface Configuration {
  urls: Record<ServiceName, string>;
  environments: Record<ServiceName, Record<string, string>>;
}

/** Each service's address and environment on this devnet. */
async function configure(
  options: StackOptions,
  prefix: string,
  devnet: Devnet,
  seed: DemoSeed,
): Promise<Configuration> {
  const ports = {} as Record<ServiceName, number>;
  for (const name of SERVICE_NAMES)
    ports[name] = options.ports === "default" ? DEFAULT_PORTS[name] : await freePort();
  const urls = Object.fromEntries(SERVICE_NAMES.map((n) => [n, `http://127.0.0.1:${ports[n]}`])) as Record<
    ServiceName,
    string
  >;
  const common: Record<string, string> = {
    DATABASE_URL: options.databaseUrl,
    NATS_URL: options.natsUrl,
    EVENTS_PREFIX: prefix,
    LOG_LEVEL: options.logLevel ?? "info",
    NODE_ENV: "development",
    // Reachable from this machine only; make up takes HOST from its environment to open it up.
    HOST: "127.0.0.1",
    // No load balancer to leave: stopping does not wait out a drain.
    SHUTDOWN_DRAIN_MS: "0",
    ...(options.otlpEndpoint
      ? { OTEL_EXPORTER_OTLP_ENDPOINT: options.otlpEndpoint, OTEL_BSP_SCHEDULE_DELAY: "200" }
      : {}),
  };
  const ownership = seed.schemas.agentOwnership;
  const env: Record<ServiceName, Record<string, string>> = {
    "chain-indexer": {
      PORT: String(ports["chain-indexer"]),
      RPC_URL: devnet.rpcUrl,
      CHAIN_ID: String(devnet.chainId),
      SCHEMA_REGISTRY_ADDRESSES: `${devnet.addresses.schemaRegistry},${devnet.addresses.legacySchemaRegistry}`,
      ATTESTATION_REGISTRY_ADDRESS: devnet.addresses.attestationRegistry,
      START_BLOCK: "0",
      CONFIRMATIONS: "1",
      POLL_INTERVAL_MS: "250",
    },
    "attestations-api": { PORT: String(ports["attestations-api"]), RATE_LIMIT_MAX: "100000" },
    verifier: {
      PORT: String(ports.verifier),
      HOST_URL: urls.verifier,
      AUDIENCE_DID: "did:iden3:billions:main:2VmAkXrihYaL6v6ShQGFEHmT6nd5LsqiCtfmFjeA8F",
      ALLOWED_ISSUER: "did:iden3:billions:main:2VmAkXrihYaL6v6ShQGFEHmT6nd5LsqiCtfmFjeA8F",
      POU_SCHEMA_CONTEXT: "ipfs://QmcUEDa42Er4nfNFmGQVjiNYFaik6kvNQjfTeBrdSx83At",
      NULLIFIER_SESSION_ID: DEMO_NULLIFIER_SESSION_ID,
      VERIFIER_WORKERS: "1",
    },
    "agent-auth": {
      PORT: String(ports["agent-auth"]),
      PUBLIC_URL: urls["agent-auth"],
      OWNERSHIP_SCHEMA_ID: ownership,
      ATTESTATIONS_API_URL: urls["attestations-api"],
    },
    "payment-gateway": {
      PORT: String(ports["payment-gateway"]),
      PUBLIC_URL: urls["payment-gateway"],
      EVM_ADDRESS: devnet.accounts[9]!.address,
      FACILITATOR_URL: "local",
      FACILITATOR_RPC_URL: devnet.rpcUrl,
      FACILITATOR_PRIVATE_KEY: devnet.accounts[8]!.privateKey,
      ATTESTATIONS_API_URL: urls["attestations-api"],
      AGENT_OWNERSHIP_SCHEMA: ownership,
    },
    webhooks: {
      PORT: String(ports.webhooks),
      ADMIN_TOKEN: DEV_WEBHOOKS_ADMIN_TOKEN,
      // Receivers on this machine (a developer's, a test's): refused otherwise, as loopback.
      WEBHOOK_ALLOWED_NETWORKS: "127.0.0.0/8",
      WEBHOOK_IDLE_MS: "250",
    },
  };
  env["payment-gateway"].ROUTES_FILE = writeGatewayRoutes(devnet, prefix);
  const credentials = (n: ServiceName): Record<string, string> =>
    options.natsPasswords ? { NATS_USER: n, NATS_PASSWORD: options.natsPasswords(n) } : {};
  const environments = Object.fromEntries(
    SERVICE_NAMES.map((n) => [n, { ...common, ...credentials(n), ...env[n], ...(options.env?.[n] ?? {}) }]),
  ) as Record<ServiceName, Record<string, string>>;
  return { urls, environments };
}

async function waitForDemoData(apiUrl: string, seed: DemoSeed, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const ready = async () => {
    for (const pairing of seed.pairings) {
      const list = await fetch(
        `${apiUrl}/api/v1/attestations?schemaId=${seed.schemas.agentOwnership}&recipientEthereumAddress=${pairing.recipient.ethereumAddress}`,
      ).then((r) => r.json() as Promise<{ totalItems: number; data: { fromId: string }[] }>);
      if (list.totalItems !== 1) return false;
      const nullifier = await fetch(`${apiUrl}/api/v1/nullifier?userId=${list.data[0].fromId}`);
      if (nullifier.status !== 200) return false;
    }
    return true;
  };
  while (!(await ready().catch(() => false))) {
    if (Date.now() > deadline)
      throw new Error("the attestations API did not serve the demo pairings in time");
    await sleep(250);
  }
}

/** The gateway's demo routes, priced in the USDC this devnet deployed. */
function writeGatewayRoutes(devnet: Devnet, prefix: string): string {
  const routes = JSON.parse(
    readFileSync(path.join(REPO_ROOT, "services/payment-gateway/config/routes.json"), "utf8"),
  );
  for (const asset of Object.values(routes.assets as Record<string, { address: string }>)) {
    asset.address = devnet.addresses.usdc;
  }
  const file = path.join(REPO_ROOT, ".run", `gateway-routes${prefix ? `-${prefix}` : ""}.json`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(routes, null, 2));
  return file;
}

export function randomPrefix(): string {
  return `s${randomBytes(4).toString("hex")}`;
}
