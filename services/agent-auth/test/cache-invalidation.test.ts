import { sql } from "@humanpass/db";
import {
  type AttestationRevokedData,
  type BlocksRevertedData,
  createCloudEvent,
  ensureStreams,
  jetstreamManager,
  type RunningConsumer,
  subjectOf,
} from "@humanpass/events";
import type { HumanResolution } from "@humanpass/human-proof";
import { didFromAddress, iden3IdFromAddress } from "@humanpass/identity";
import { connectTestNats, deleteTestStreams, eventually, testTopology } from "@humanpass/testing";
import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InvalidationListener, listenForInvalidations, startCacheInvalidation } from "../src";
import { addressKey, didKey, ResolutionCache } from "../src/attestations/resolution-cache";
import { logger, setUpDatabase, type TestDb } from "./harness";

const topology = testTopology();
let nc: NatsConnection;
let t: TestDb;
let consumers: RunningConsumer[] = [];
let listeners: InvalidationListener[] = [];
/** Two replicas' caches: the consumer hands each event to one process, both caches must drop the entry. */
const replicas = [0, 1].map(() => new ResolutionCache({ ttlMs: 600_000, maxEntries: 100, clock: Date.now }));
const [cache, other] = replicas as [ResolutionCache, ResolutionCache];

const position = {
  chainId: 45056,
  blockNumber: 7,
  blockHash: `0x${"0b".repeat(32)}`,
  logIndex: 0,
  txHash: `0x${"0c".repeat(32)}`,
};

function entry(agent: string, attestationId: string): HumanResolution {
  return {
    humanId: "9",
    verifiedAt: "2026-11-01T10:00:00.000Z",
    attestationId,
    humanDid: "did:iden3:billions:main:human",
    humanAddress: agent,
    agentDid: didFromAddress(agent),
    agentAddress: agent,
  };
}

async function publish(type: string, data: unknown) {
  const event = createCloudEvent({ source: "chain-indexer", type, data });
  await jetstream(nc).publish(subjectOf(topology, "CHAIN", type), JSON.stringify(event), { msgID: event.id });
}

beforeAll(async () => {
  t = await setUpDatabase("agent_auth_cache");
  nc = await connectTestNats();
  await ensureStreams(await jetstreamManager(nc), topology, ["CHAIN"]);
  listeners = await Promise.all(
    replicas.map((c) =>
      listenForInvalidations({ connectionString: t.database.url, cache: c, logger, reconnectDelayMs: 50 }),
    ),
  );
  consumers = await startCacheInvalidation({ db: t.db, nats: nc, topology, logger });
});

afterAll(async () => {
  for (const c of consumers) await c.stop();
  for (const l of listeners) await l.stop();
  await deleteTestStreams(nc, topology);
  await nc.close();
  await t.db.destroy();
  await t.database.drop();
});

const AGENT = "0x3333333333333333333333333333333333333333";
const BYSTANDER = "0x4444444444444444444444444444444444444444";

function revocation(agent: string, attestationId: string): AttestationRevokedData {
  return {
    attestationId,
    revoker: BYSTANDER,
    revokerIden3Id: "1",
    recipientDid: didFromAddress(agent),
    recipientIden3Id: iden3IdFromAddress(agent),
    revocationTime: 1_800_000_000,
    registry: BYSTANDER,
    ...position,
  };
}

describe("cache invalidation from chain events, in every replica", () => {
  it("chain.attestation_revoked drops the cached lookups of that agent in both caches, and only those", async () => {
    const revokedId = `0x${"aa".repeat(32)}`;
    for (const c of replicas) {
      c.set(addressKey(AGENT), entry(AGENT, revokedId));
      c.set(didKey(didFromAddress(AGENT)), entry(AGENT, revokedId));
      c.set(addressKey(BYSTANDER), entry(BYSTANDER, `0x${"bb".repeat(32)}`));
    }
    await publish("attestation_revoked", revocation(AGENT, revokedId));
    await eventually(() => replicas.every((c) => c.get(addressKey(AGENT)) === undefined));
    for (const c of replicas) {
      expect(c.get(didKey(didFromAddress(AGENT)))).toBeUndefined();
      expect(c.get(addressKey(BYSTANDER))).toBeDefined();
    }
    // One shared durable, applied once through the inbox.
    const inbox = await t.db.selectFrom("inbox").select("consumer").execute();
    expect(inbox.map((r) => r.consumer)).toEqual(["agent_auth_cache_revoked"]);
  });

  it("chain.blocks_reverted drops everything in both caches", async () => {
    for (const c of replicas) c.set(addressKey(AGENT), entry(AGENT, `0x${"cc".repeat(32)}`));
    const reverted: BlocksRevertedData = {
      chainId: 45056,
      fromBlock: 5,
      toBlock: 7,
      attestationIds: [],
      revokedAttestationIds: [],
      schemaIds: [],
    };
    await publish("blocks_reverted", reverted);
    await eventually(() => replicas.every((c) => c.size === 0));
  });

  it("a lost LISTEN connection clears that cache, and invalidations reach it again once it is back", async () => {
    cache.set(addressKey(AGENT), entry(AGENT, `0x${"dd".repeat(32)}`));
    other.set(addressKey(AGENT), entry(AGENT, `0x${"dd".repeat(32)}`));
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
      where application_name = 'agent-auth cache' and datname = current_database()`.execute(t.db);
    await eventually(() => cache.size === 0 && other.size === 0);

    // Back when both connections have run their LISTEN (a reconnect clears the cache once more right after).
    await eventually(async () => {
      const { rows } = await sql<{ n: string }>`select count(*) as n from pg_stat_activity
        where application_name = 'agent-auth cache' and datname = current_database()
          and state = 'idle' and query = 'listen agent_auth_cache'`.execute(t.db);
      return Number(rows[0]!.n) === 2;
    });
    await new Promise((resolve) => setImmediate(resolve));
    const revokedId = `0x${"ee".repeat(32)}`;
    for (const c of replicas) c.set(addressKey(AGENT), entry(AGENT, revokedId));
    await publish("attestation_revoked", revocation(AGENT, revokedId));
    await eventually(() => replicas.every((c) => c.get(addressKey(AGENT)) === undefined));
  });
});
