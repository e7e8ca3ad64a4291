import {
  createChainClient,
  createIndexer,
  createIndexerMetrics,
  SCHEMA as INDEXER_SCHEMA,
  type Indexer,
  migrations as indexerMigrations,
} from "@humanpass/chain-indexer";
import { createDb, type Kysely, migrateToLatest } from "@humanpass/db";
import {
  AGENT_OWNERSHIP_SCHEMA,
  type Devnet,
  encodeSchemaData,
  identityFromAddress,
  recordAttestation,
  registerSchema,
  revokeAttestation,
  startDevnet,
} from "@humanpass/devnet";
import { type OutboxRelay, startOutboxRelay } from "@humanpass/event-bus";
import { createTestDatabase, eventually, type TestDatabase } from "@humanpass/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getJson, type Harness, logger, startHarness } from "./support/harness.ts";

/**
 * End to end on the devnet: the chain-indexer (in-process, with its outbox relay) reads the registries and
 * publishes to JetStream; the API's consumers fill the read model; a client sees the chain within seconds.
 */
let devnet: Devnet;
let h: Harness;
let indexerDatabase: TestDatabase;
let indexerDb: Kysely<any>;
let relay: OutboxRelay;
let indexer: Indexer;
const SECONDS = 10_000;

beforeAll(async () => {
  [devnet, h, indexerDatabase] = await Promise.all([
    startDevnet(),
    startHarness("att_devnet"),
    createTestDatabase("att_devnet_indexer"),
  ]);
  indexerDb = createDb<any>({ connectionString: indexerDatabase.url, schema: INDEXER_SCHEMA, max: 4 });
  await migrateToLatest(indexerDb, { schema: INDEXER_SCHEMA, migrations: indexerMigrations });
  relay = startOutboxRelay({
    nats: h.nats,
    schema: INDEXER_SCHEMA,
    logger,
    connectionString: indexerDatabase.url,
    pollIntervalMs: 100,
  });
  indexer = createIndexer({
    db: indexerDb,
    client: createChainClient(devnet.rpcUrl, { timeoutMs: 10_000 }),
    topology: h.topology,
    logger,
    metrics: createIndexerMetrics(),
    outboxCommitted: () => relay.wake(),
    settings: {
      chainId: devnet.chainId,
      attestationRegistry: devnet.addresses.attestationRegistry,
      schemaRegistries: [devnet.addresses.schemaRegistry, devnet.addresses.legacySchemaRegistry],
      startBlock: 0n,
      confirmations: 0n,
      blockRange: 2_000n,
      maxLogsPerCommit: 5_000,
      readBatchSize: 100,
      readConcurrency: 2,
      multicallAddress: devnet.addresses.multicall3,
      pollIntervalMs: 100,
      retry: { baseMs: 10, maxMs: 200 },
      reorgWindowBlocks: 10_000n,
      progressLogIntervalMs: 60_000,
    },
  });
  await indexer.checkChain();
  indexer.start();
});

afterAll(async () => {
  await indexer?.stop();
  await relay?.stop();
  await indexerDb?.destroy();
  await h?.close();
  await Promise.all([devnet?.stop(), indexerDatabase?.drop()]);
});

describe("devnet → chain-indexer → NATS → attestations API", () => {
  it("serves an ownership attestation recorded on chain within seconds; a revocation removes it from the list", async () => {
    const [human, agent] = [devnet.accounts[1]!, devnet.accounts[2]!].map((a) =>
      identityFromAddress(a.address),
    );
    const schema = await registerSchema(devnet, {
      ...AGENT_OWNERSHIP_SCHEMA,
      revocable: true,
      from: devnet.accounts[0]!.address,
    });
    const recorded = await recordAttestation(devnet, {
      schemaId: schema.id,
      attester: human!,
      recipient: agent!,
      revocable: true,
      data: encodeSchemaData(AGENT_OWNERSHIP_SCHEMA.schema, ["0x"]),
    });
    const lookup = `/api/v1/attestations?schemaId=${schema.id}&recipientDid=${agent!.did}`;

    const listed = await eventually(async () => {
      const { body } = await getJson(h.app, lookup);
      return body.totalItems === 1 ? body : undefined;
    }, SECONDS);
    expect(listed.data[0]).toMatchObject({
      id: recorded.id,
      schemaInfo: {
        index: "1",
        id: schema.id,
        name: "AgentOwnership",
        schemaSignatures: [{ name: "data", type: "bytes" }],
      },
      fromDid: human!.did,
      toDid: agent!.did,
      fromId: human!.iden3Id.toString(),
      toId: agent!.iden3Id.toString(),
      fromEthereumAddress: human!.ethereumAddress,
      toEthereumAddress: agent!.ethereumAddress,
    });
    expect(JSON.parse(listed.data[0].decodedDataJson)).toEqual([
      {
        name: "data",
        type: "bytes",
        signature: "bytes data",
        value: { name: "data", type: "bytes", value: "0x" },
      },
    ]);
    const byAddress = await getJson(
      h.app,
      `/api/v1/attestations?schemaId=${schema.id}&recipientEthereumAddress=${agent!.ethereumAddress}`,
    );
    expect(byAddress.body.totalItems).toBe(1);
    const before = await getJson(h.app, `/api/v1/attestations/${recorded.id}`);
    expect(before.body).toMatchObject({
      txid: recorded.txHash,
      revoked: false,
      revocationTime: 0,
      revocable: true,
      expirationTime: 0,
    });

    await revokeAttestation(devnet, recorded.id);
    await eventually(async () => (await getJson(h.app, lookup)).body.totalItems === 0, SECONDS);
    const after = await getJson(h.app, `/api/v1/attestations/${recorded.id}`);
    expect(after.status).toBe(200);
    expect(after.body.revoked).toBe(true);
    expect(after.body.revocationTime).toBeGreaterThan(0);
  });
});
