/**
 * Everything the end-to-end tests run against, all real and local: a devnet with the registries, the
 * chain-indexer (its own process, as deployed), the attestations-api (built in-process from its app.ts, so a test
 * can stop and restart it), Postgres (one database per test file, one schema per service), NATS JetStream (own
 * stream prefix) and agent-auth apps built from app.ts with the real registry client.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  SCHEMA as API_SCHEMA,
  migrations as apiMigrations,
  buildApp as buildAttestationsApi,
  startReadModelConsumers,
} from "@humanpass/attestations-api";
import type { Kysely, Pool } from "@humanpass/db";
import {
  type Devnet,
  identityFromAddress,
  recordAttestation,
  registerSchema,
  revokeAttestation,
  startDevnet,
} from "@humanpass/devnet";
import {
  type CloudEvent,
  createCloudEvent,
  followChainInvalidations,
  type NatsConnection,
  subjectOf,
  type Topology,
  type UniquenessVerifiedData,
} from "@humanpass/event-bus";
import type { HttpApp } from "@humanpass/http";
import { PostgresUsedNonceStore } from "@humanpass/human-proof/postgres";
import {
  buildStack,
  eventually,
  freePort,
  type ServiceProcess,
  startServiceMain,
  type TestDatabase,
  testBus,
  testDatabase,
} from "@humanpass/testing";
import { serviceConnections } from "@humanpass/testing/service-connections";
import { jetstream } from "@nats-io/jetstream";
import type { Hex } from "viem";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { type AgentAuthDb, buildApp, type Clock, createRegistry, migrations, SCHEMA } from "../src/index.ts";
import { logger, testTerms } from "./harness.ts";

export interface AgentAuthOptions {
  /** Positive-lookup cache lifetime; 0 turns it off. */
  cacheTtlMs?: number;
  oneClaimPerHuman?: boolean;
  /** Where the app reads the registry; the API itself by default. */
  apiUrl?: string;
  clock?: Clock;
}

export interface RunningApp {
  url: string;
  app: HttpApp;
  close(): Promise<void>;
}

export interface Human {
  account: PrivateKeyAccount;
  did: string;
  userId: string;
  nullifier: string;
}

export interface Stack {
  devnet: Devnet;
  database: TestDatabase;
  db: Kysely<AgentAuthDb>;
  nats: NatsConnection;
  topology: Topology;
  ownershipSchema: Hex;
  /** Base address of the attestations API (…/api/v1). */
  apiUrl: string;
  /** Events agent-auth published, as NATS delivered them. */
  events: CloudEvent<any>[];
  startAgentAuth(options?: AgentAuthOptions): Promise<RunningApp>;
  /** A person who passed the uniqueness check: their nullifier reaches the API as the verifier's event. */
  verifiedHuman(): Promise<Human>;
  /** Records on the devnet, through a relay account, that `human` paired `agent`; waits until the API lists it. */
  pair(human: Human, agent: PrivateKeyAccount): Promise<Hex>;
  /** Revokes the pairing on the devnet (the relay, its attester address, sends it). */
  revoke(attestationId: Hex): Promise<void>;
  stopApi(): Promise<void>;
  startApi(): Promise<void>;
  close(): Promise<void>;
}

/** The devnet account that submits pairings for humans (the identity skill's relay). */
const RELAY_ACCOUNT = 1;

export async function startStack(label: string): Promise<Stack> {
  const stack = await buildStack()
    .add("devnet", {
      start: () => startDevnet({ accounts: 4, usdcAccounts: 0 }),
      stop: (devnet) => devnet.stop(),
    })
    .add("ownershipSchema", async ({ devnet }) => {
      const { id } = await registerSchema(devnet, {
        name: "AgentOwnership",
        schema: "bytes data",
        revocable: true,
      });
      return id;
    })
    .add("database", testDatabase(label))
    .add("bus", testBus({ streams: ["CHAIN", "VERIFIER", "AGENT_AUTH"], record: "agent_auth.>" }))
    .add("indexer", {
      start: ({ devnet, database, bus }) => startChainIndexer(devnet, database.url, bus.topology),
      stop: (indexer) => indexer.stop(),
    })
    .add(
      "apiConnections",
      serviceConnections({
        name: "attestations-api",
        schema: API_SCHEMA,
        migrations: apiMigrations,
        streams: ["CHAIN", "VERIFIER"],
        publishes: false,
        logger,
        pool: { max: 6 },
      }),
    )
    .add("apiConsumers", {
      start: ({ apiConnections: { db }, bus: { nats, topology } }) =>
        startReadModelConsumers({ db, nats, topology, logger }),
      stop: (consumers) => Promise.all(consumers.map((c) => c.stop())),
    })
    .add("api", {
      start: ({ apiConnections }) => startRestartableApi(apiConnections.pool),
      stop: (api) => api.stop(),
    })
    .add(
      "connections",
      serviceConnections({
        name: "agent-auth",
        schema: SCHEMA,
        migrations,
        streams: ["CHAIN", "VERIFIER", "AGENT_AUTH"],
        publishes: true,
        logger,
        pool: { max: 20 },
        relay: { pollIntervalMs: 100 },
      }),
    )
    .start();
  const { devnet, database, ownershipSchema, api } = stack;
  const { nats, topology, events } = stack.bus;
  const db = stack.connections.db as Kysely<AgentAuthDb>;
  const apiUrl = api.url;
  // One store for every replica app: they share the database, as the deployed replicas do.
  const usedNonces = new PostgresUsedNonceStore(stack.connections.pool);
  let humans = 0;

  return {
    devnet,
    database,
    db,
    nats,
    topology,
    ownershipSchema,
    apiUrl,
    events,
    stopApi: api.stop,
    startApi: api.start,
    close: stack.close,

    async startAgentAuth(options = {}) {
      const terms = testTerms(ownershipSchema);
      const clock = options.clock ?? Date.now;
      const { resolver, cache } = createRegistry({
        attestationsApiUrl: options.apiUrl ?? apiUrl,
        timeoutMs: 1_000,
        retries: 2,
        ownershipSchema: terms.ownershipSchema,
        cacheTtlMs: options.cacheTtlMs ?? 600_000,
        cacheMaxEntries: 1_000,
        clock,
        logger,
      });
      const app = await buildApp({
        logger,
        db,
        usedNonces,
        topology,
        terms,
        resolver,
        clock,
        oneClaimPerHuman: options.oneClaimPerHuman ?? false,
        outboxCommitted: () => stack.connections.relay?.wake(),
        rateLimit: false,
      });
      const url = await app.listen({ port: 0, host: "127.0.0.1" });
      // Each app is a replica with its own cache, told of revocations like the deployed service.
      const invalidations = await followChainInvalidations({ nats, topology, logger, cache });
      const running: RunningApp = {
        url,
        app,
        async close() {
          await invalidations.stop();
          await app.close();
        },
      };
      stack.onClose(running.close);
      return running;
    },

    async verifiedHuman() {
      const account = privateKeyToAccount(generatePrivateKey());
      const identity = identityFromAddress(account.address);
      humans++;
      const human: Human = {
        account,
        did: identity.did,
        userId: identity.iden3Id.toString(),
        nullifier: (10n ** 30n + BigInt(humans) * 7_919n).toString(),
      };
      const data: UniquenessVerifiedData = {
        sessionId: humans,
        nullifier: human.nullifier,
        nullifierSessionId: "20261122",
        userDid: human.did,
        userId: human.userId,
        verifiedAt: new Date().toISOString(),
      };
      const event = createCloudEvent({ source: "verifier", type: "uniqueness_verified", data });
      await jetstream(nats).publish(
        subjectOf(topology, "VERIFIER", "uniqueness_verified"),
        JSON.stringify(event),
        {
          msgID: event.id,
        },
      );
      await eventually(
        async () => (await fetch(`${apiUrl}/api/v1/nullifier?userId=${human.userId}`)).ok,
        20_000,
      );
      return human;
    },

    async pair(human, agent) {
      const { did, iden3Id } = identityFromAddress(human.account.address);
      const { id } = await recordAttestation(
        devnet,
        {
          schemaId: ownershipSchema,
          attester: { did, iden3Id },
          recipient: identityFromAddress(agent.address),
          revocable: true,
        },
        { from: devnet.accounts[RELAY_ACCOUNT]!.address },
      );
      await eventually(async () => (await fetch(`${apiUrl}/api/v1/attestations/${id}`)).ok, 20_000);
      return id;
    },

    async revoke(attestationId) {
      await revokeAttestation(devnet, attestationId);
    },
  };
}

/** The attestations API on a port of its own, which a test can stop and start again on the same pool and port. */
async function startRestartableApi(pool: Pool) {
  const port = await freePort();
  let api: HttpApp | undefined;
  const start = async () => {
    api = await buildAttestationsApi({ pool, logger, rateLimit: false });
    await api.listen({ port, host: "127.0.0.1" });
  };
  const stop = async () => {
    await api?.close();
    api = undefined;
  };
  await start();
  return { url: `http://127.0.0.1:${port}`, start, stop };
}

/** The chain-indexer as its own process (its main.ts), indexing every block at once. */
async function startChainIndexer(
  devnet: Devnet,
  databaseUrl: string,
  topology: Topology,
): Promise<ServiceProcess> {
  return startServiceMain("chain-indexer", {
    DATABASE_URL: databaseUrl,
    EVENTS_PREFIX: topology.prefix,
    RPC_URL: devnet.rpcUrl,
    CHAIN_ID: String(devnet.chainId),
    ATTESTATION_REGISTRY_ADDRESS: devnet.addresses.attestationRegistry,
    SCHEMA_REGISTRY_ADDRESSES: `${devnet.addresses.schemaRegistry},${devnet.addresses.legacySchemaRegistry}`,
    CONFIRMATIONS: "0",
    POLL_INTERVAL_MS: "100",
  });
}

export interface FaultyProxy {
  /** Origin that forwards to the API (an ATTESTATIONS_API_URL). */
  apiUrl: string;
  /** Paths under /api/v1 answered with a fault instead of being forwarded. */
  faults: Map<string, "unavailable" | "no-data-array">;
  close(): Promise<void>;
}

/** Forwards to the real API, except for the paths a test tells it to break. */
export async function startFaultyProxy(targetApiUrl: string): Promise<FaultyProxy> {
  const target = new URL(targetApiUrl);
  const faults = new Map<string, "unavailable" | "no-data-array">();
  const server = http.createServer((req, res) => {
    const route = new URL(req.url!, "http://proxy").pathname.replace(/^\/api\/v1/, "");
    const fault = faults.get(route);
    if (fault === "unavailable") {
      res
        .writeHead(503, { "content-type": "application/json" })
        .end(JSON.stringify({ message: "Service Unavailable" }));
      return;
    }
    if (fault === "no-data-array") {
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ totalItems: 0, data: null }));
      return;
    }
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    apiUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    faults,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
