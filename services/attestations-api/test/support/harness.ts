import { randomBytes } from "node:crypto";
import type { Kysely, Migration, Pool } from "@humanpass/db";
import type {
  AttestationRecordedData,
  AttestationRevokedData,
  BlocksRevertedData,
  SchemaRegisteredData,
  UniquenessVerifiedData,
} from "@humanpass/event-bus";
import {
  assertValidEvent,
  createCloudEvent,
  ensureStreams,
  jetstreamManager,
  type NatsConnection,
  type RunningConsumer,
  STREAMS,
  type StreamName,
  subjectOf,
  type Topology,
} from "@humanpass/event-bus";
import type { HttpApp } from "@humanpass/http";
import { didFromAddress, iden3IdFromAddress } from "@humanpass/identity";
import { prepareConnections } from "@humanpass/service";
import {
  connectTestNats,
  createTestDatabase,
  deleteTestStreams,
  eventually,
  type TestDatabase,
  testTopology,
} from "@humanpass/testing";
import { jetstream } from "@nats-io/jetstream";
import pino from "pino";
import { encodeAbiParameters, getAddress, type Hex } from "viem";
import { type AppDeps, buildApp } from "../../src/app.ts";
import { SCHEMA } from "../../src/config.ts";
import { migrations } from "../../src/db/migrations/index.ts";
import { readSessionSettings } from "../../src/db/session-settings.ts";
import type { Database } from "../../src/db/types.ts";
import { startReadModelConsumers } from "../../src/events/consumers.ts";

/** The path of an API route: `api("/schemas")` is `/api/v1/schemas`. */
export const api = (path: string) => `/api/v1${path}`;

export const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
export const CHAIN_ID = 45056;

export interface Harness {
  database: TestDatabase;
  db: Kysely<Database>;
  /** The pool under `db`, with the service's session settings, as main.ts builds it. */
  pool: Pool;
  nats: NatsConnection;
  topology: Topology;
  app: HttpApp;
  consumers: RunningConsumer[];
  /** Publishes to JetStream (with Nats-Msg-Id) and waits until the read model applied it. */
  publish<D>(stream: StreamName, type: string, data: D, options?: { id?: string }): Promise<string>;
  /** Publishes without waiting. */
  publishOnly<D>(stream: StreamName, type: string, data: D, options?: { id?: string }): Promise<string>;
  waitApplied(eventIds: string[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * A database migrated for the service (to the latest migration, or only through `schemaMigrations`), its own streams,
 * the two read-model consumers and the app.
 */
export async function startHarness(
  label: string,
  appOptions: Partial<AppDeps> = {},
  schemaMigrations: Record<string, Migration> = migrations,
): Promise<Harness> {
  const database = await createTestDatabase(label);
  const topology = testTopology();
  const prepared = await prepareConnections({
    name: "attestations-api",
    schema: SCHEMA,
    migrations: schemaMigrations,
    streams: ["CHAIN", "VERIFIER"],
    publishes: false,
    databaseUrl: database.url,
    topology,
    logger,
    // The topology step creates the streams in a deployment; here the test does.
    async connectNats() {
      const nats = await connectTestNats();
      await ensureStreams(await jetstreamManager(nats), topology, ["CHAIN", "VERIFIER"]);
      return nats;
    },
    pool: { max: 8, settings: readSessionSettings() },
  });
  const { pool, nats } = prepared;
  const db = prepared.db as Kysely<Database>;
  const consumers = await startReadModelConsumers({
    db,
    nats,
    topology,
    logger,
    meter: appOptions.metrics?.meter,
  });
  const app = await buildApp({
    pool,
    logger,
    rateLimit: false,
    corsOrigins: ["https://app.example"],
    ...appOptions,
  });
  await app.ready();
  const js = jetstream(nats);

  async function publishOnly<D>(stream: StreamName, type: string, data: D, options: { id?: string } = {}) {
    const event = createCloudEvent({ source: STREAMS[stream].source, type, data, id: options.id });
    assertValidEvent(stream, event);
    await js.publish(subjectOf(topology, stream, type), JSON.stringify(event), { msgID: event.id });
    return event.id;
  }
  async function waitApplied(ids: string[]) {
    await eventually(
      async () => {
        const rows = await db.selectFrom("inbox").select("event_id").where("event_id", "in", ids).execute();
        return rows.length === new Set(ids).size;
      },
      20_000,
      20,
    );
  }
  return {
    database,
    db,
    pool,
    nats,
    topology,
    app,
    consumers,
    publishOnly,
    waitApplied,
    async publish(stream, type, data, options) {
      const id = await publishOnly(stream, type, data, options);
      await waitApplied([id]);
      return id;
    },
    async close() {
      await app.close();
      for (const c of consumers) await c.stop();
      await deleteTestStreams(nats, topology);
      await nats.close();
      await db.destroy();
      await database.drop();
    },
  };
}

export const randomHex32 = (): Hex => `0x${randomBytes(32).toString("hex")}`;
export const randomAddress = (): Hex => getAddress(`0x${randomBytes(20).toString("hex")}`);

let nextBlock = 100;
/** Chain positions that only grow, as the indexer's would. */
export function nextPosition(logIndex = 0) {
  return {
    chainId: CHAIN_ID,
    blockNumber: nextBlock++,
    blockHash: randomHex32(),
    logIndex,
    txHash: randomHex32(),
  };
}

export const REGISTRY = getAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3");

export function schemaRegistered(overrides: Partial<SchemaRegisteredData> = {}): SchemaRegisteredData {
  const registerer = randomAddress();
  return {
    schemaId: randomHex32(),
    name: "AgentOwnership",
    schema: "bytes data",
    resolver: "0x0000000000000000000000000000000000000000",
    revocable: false,
    registerer,
    registererIden3Id: "0",
    registry: REGISTRY,
    blockTimestamp: 1_750_000_000,
    ...nextPosition(),
    ...overrides,
  };
}

export interface Party {
  address: Hex;
  did: string;
  iden3Id: string;
}

export function party(address: Hex = randomAddress()): Party {
  return { address, did: didFromAddress(address, "main"), iden3Id: iden3IdFromAddress(address, "main") };
}

export function attestationRecorded(
  schemaId: string,
  from: Party,
  to: Party,
  overrides: Partial<AttestationRecordedData> = {},
): AttestationRecordedData {
  return {
    attestationId: randomHex32(),
    schemaId,
    creationTime: 1_760_000_000,
    expirationTime: 0,
    revocationTime: 0,
    attesterDid: from.did,
    attesterIden3Id: from.iden3Id,
    attesterEthereumAddress: from.address,
    recipientDid: to.did,
    recipientIden3Id: to.iden3Id,
    recipientEthereumAddress: to.address,
    revocable: true,
    refId: `0x${"0".repeat(64)}`,
    data: encodeAbiParameters([{ type: "bytes" }], ["0x"]),
    registry: REGISTRY,
    ...nextPosition(),
    ...overrides,
  };
}

export function attestationRevoked(
  attestationId: string,
  to: Party,
  overrides: Partial<AttestationRevokedData> = {},
): AttestationRevokedData {
  return {
    attestationId,
    revoker: randomAddress(),
    revokerIden3Id: "0",
    recipientDid: to.did,
    recipientIden3Id: to.iden3Id,
    revocationTime: 1_770_000_000,
    registry: REGISTRY,
    ...nextPosition(),
    ...overrides,
  };
}

export function blocksReverted(
  fromBlock: number,
  overrides: Partial<BlocksRevertedData> = {},
): BlocksRevertedData {
  return {
    chainId: CHAIN_ID,
    fromBlock,
    toBlock: fromBlock + 10,
    attestationIds: [],
    revokedAttestationIds: [],
    schemaIds: [],
    ...overrides,
  };
}

export function uniquenessVerified(userId: string, nullifier: string): UniquenessVerifiedData {
  return {
    sessionId: 1,
    nullifier,
    nullifierSessionId: "12345",
    userDid: "did:iden3:billions:main:2VmAk7fGHQP5FN2jZ8X9Y1Kz7hFgJhQbQ3Zz3FWCXR",
    userId,
    verifiedAt: new Date().toISOString(),
  };
}

export async function getJson(app: HttpApp, url: string, headers: Record<string, string> = {}) {
  const res = await app.inject({ method: "GET", url, headers });
  let body: any;
  try {
    body = res.json();
  } catch {
    body = res.body;
  }
  return { status: res.statusCode, body, headers: res.headers };
}
