import type { Kysely } from "@humanpass/db";
import { ABIs, type Devnet, type StartDevnetOptions, startDevnet } from "@humanpass/devnet";
import {
  assertValidEvent,
  type CloudEvent,
  type NatsConnection,
  type OutboxRelay,
  streamName,
  type Topology,
} from "@humanpass/event-bus";
import type { Logger } from "@humanpass/telemetry";
import { buildStack, eventually, type TestDatabase, testBus, testDatabase } from "@humanpass/testing";
import { serviceConnections } from "@humanpass/testing/service-connections";
import { jetstream } from "@nats-io/jetstream";
import pino from "pino";
import type { Hex } from "viem";
import { createChainClient } from "../src/chain/client.ts";
import type { IndexerSettings } from "../src/config.ts";
import { migrations } from "../src/db/migrations/index.ts";
import { type ChainIndexerDb, SCHEMA } from "../src/db/schema.ts";
import { createIndexer, type Indexer } from "../src/indexer.ts";
import { createIndexerMetrics, type IndexerMetrics } from "../src/metrics.ts";

export const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

/** Every CHAIN event a subscriber receives, in stream order, each checked against the catalog schema. */
export class EventCollector {
  readonly events: CloudEvent<any>[] = [];
  private readonly stop: () => Promise<void>;

  private constructor(stop: () => Promise<void>) {
    this.stop = stop;
  }

  static async start(nats: NatsConnection, topology: Topology): Promise<EventCollector> {
    const consumer = await jetstream(nats).consumers.get(streamName(topology, "CHAIN"));
    const messages = await consumer.consume();
    const collector: EventCollector = new EventCollector(async () => {
      await messages.close();
      await pump;
    });
    const pump = (async () => {
      for await (const message of messages) {
        const event = message.json<unknown>();
        assertValidEvent("CHAIN", event);
        collector.events.push(event);
      }
    })();
    return collector;
  }

  /** Events once each, as an idempotent consumer applies them (duplicates share the CloudEvent id). */
  unique(): CloudEvent<any>[] {
    const seen = new Set<string>();
    return this.events.filter((e) => !seen.has(e.id) && seen.add(e.id));
  }

  ofType(type: string): CloudEvent<any>[] {
    return this.unique().filter((e) => e.type === type);
  }

  close(): Promise<void> {
    return this.stop();
  }
}

/**
 * The state a consumer builds by applying the events in order: recorded attestations (with their revocation
 * time) and schemas, with orphaned ones removed on blocks_reverted. `applied` counts how often each id was
 * recorded, to catch a record applied twice.
 */
export function project(events: CloudEvent<any>[]) {
  const attestations = new Map<Hex, any>();
  const schemas = new Map<Hex, any>();
  const applied = new Map<Hex, number>();
  for (const { type, data } of events) {
    if (type === "attestation_recorded") {
      applied.set(data.attestationId, (applied.get(data.attestationId) ?? 0) + 1);
      attestations.set(data.attestationId, { ...data });
    } else if (type === "attestation_revoked") {
      const record = attestations.get(data.attestationId);
      if (record) record.revocationTime = data.revocationTime;
    } else if (type === "schema_registered") {
      schemas.set(data.schemaId, data);
    } else if (type === "blocks_reverted") {
      for (const id of data.attestationIds) {
        attestations.delete(id);
        applied.set(id, (applied.get(id) ?? 1) - 1);
      }
      for (const id of data.revokedAttestationIds) {
        const record = attestations.get(id);
        if (record) record.revocationTime = 0;
      }
      for (const id of data.schemaIds) schemas.delete(id);
    }
  }
  return { attestations, schemas, applied };
}

export interface Stack {
  devnet: Devnet;
  database: TestDatabase;
  db: Kysely<ChainIndexerDb>;
  nats: NatsConnection;
  topology: Topology;
  relay: OutboxRelay;
  collector: EventCollector;
  settings(overrides?: Partial<IndexerSettings>): IndexerSettings;
  indexer(
    overrides?: Partial<IndexerSettings>,
    rpcUrl?: string,
  ): { indexer: Indexer; metrics: IndexerMetrics };
  /** Steps the indexer until it reports nothing left to do. */
  drain(indexer: Indexer): Promise<void>;
  close(): Promise<void>;
}

export interface StackOptions {
  devnet?: StartDevnetOptions;
  /** Where the start-up steps are logged; the harness's silent logger by default. */
  logger?: Logger;
}

/** Devnet, a migrated database, the test's own streams, the outbox relay (started as the service starts them) and a subscriber. */
export async function startStack(label: string, options: StackOptions = {}): Promise<Stack> {
  const stack = await buildStack()
    .add("devnet", { start: () => startDevnet(options.devnet), stop: (devnet) => devnet.stop() })
    .beside("database", testDatabase(label))
    .add("bus", testBus({ streams: ["CHAIN"] }))
    .add(
      "connections",
      serviceConnections({
        name: "chain-indexer",
        schema: SCHEMA,
        migrations,
        streams: ["CHAIN"],
        publishes: true,
        logger: options.logger ?? logger,
        pool: { max: 4 },
        relay: { pollIntervalMs: 100, batchSize: 1000 },
      }),
    )
    .add("collector", {
      start: ({ bus }) => EventCollector.start(bus.nats, bus.topology),
      stop: (collector) => collector.close(),
    })
    .start();
  const { devnet, database, bus, collector, close } = stack;
  const { nats, topology } = bus;
  const db = stack.connections.db as Kysely<ChainIndexerDb>;

  const settings = (overrides: Partial<IndexerSettings> = {}): IndexerSettings => ({
    chainId: devnet.chainId,
    attestationRegistry: devnet.addresses.attestationRegistry,
    schemaRegistries: [devnet.addresses.schemaRegistry, devnet.addresses.legacySchemaRegistry],
    startBlock: 0n,
    confirmations: 1n,
    blockRange: 2_000n,
    maxLogsPerCommit: 5_000,
    readBatchSize: 100,
    readConcurrency: 2,
    multicallAddress: devnet.addresses.multicall3,
    pollIntervalMs: 50,
    retry: { baseMs: 10, maxMs: 200 },
    reorgWindowBlocks: 10_000n,
    progressLogIntervalMs: 5_000,
    ...overrides,
  });

  return {
    devnet,
    database,
    db,
    nats,
    topology,
    relay: stack.connections.relay!,
    collector,
    settings,
    indexer(overrides = {}, rpcUrl = devnet.rpcUrl) {
      const metrics = createIndexerMetrics();
      const indexer = createIndexer({
        db,
        client: createChainClient(rpcUrl, { timeoutMs: 10_000 }),
        topology,
        settings: settings(overrides),
        logger,
        metrics,
        outboxCommitted: () => stack.connections.relay?.wake(),
      });
      stack.onClose(() => indexer.stop());
      return { indexer, metrics };
    },
    async drain(indexer) {
      while ((await indexer.step()) !== "idle");
    },
    close,
  };
}

/** `getAttestation` for many ids, 100 per multicall. */
export async function readAttestations(devnet: Devnet, ids: readonly Hex[]) {
  const out = [];
  for (let i = 0; i < ids.length; i += 100) {
    out.push(
      ...(await devnet.client.multicall({
        allowFailure: false,
        batchSize: 0,
        contracts: ids.slice(i, i + 100).map((id) => ({
          address: devnet.addresses.attestationRegistry,
          abi: ABIs.attestationRegistry,
          functionName: "getAttestation" as const,
          args: [id] as const,
        })),
      })),
    );
  }
  return out;
}

/** The attestation_recorded payload that `getAttestation` implies (revocation comes in its own event). */
export function expectedRecorded(onChain: Awaited<ReturnType<typeof readAttestations>>[number]) {
  return {
    attestationId: onChain.id,
    schemaId: onChain.schemaId,
    creationTime: Number(onChain.creationTime),
    expirationTime: Number(onChain.expirationTime),
    revocationTime: 0,
    attesterDid: onChain.attester.did,
    attesterIden3Id: onChain.attester.iden3Id.toString(),
    attesterEthereumAddress: onChain.attester.ethereumAddress,
    recipientDid: onChain.recipient.did,
    recipientIden3Id: onChain.recipient.iden3Id.toString(),
    recipientEthereumAddress: onChain.recipient.ethereumAddress,
    revocable: onChain.revocable,
    refId: onChain.refId,
    data: onChain.data,
  };
}

export { eventually };
