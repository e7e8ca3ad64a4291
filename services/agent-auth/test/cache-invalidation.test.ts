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
import { startCacheInvalidation } from "../src";
import { addressKey, didKey, ResolutionCache } from "../src/attestations/resolution-cache";
import { logger, setUpDatabase, type TestDb } from "./harness";

const topology = testTopology();
let nc: NatsConnection;
let t: TestDb;
let consumers: RunningConsumer[] = [];
const cache = new ResolutionCache({ ttlMs: 600_000, maxEntries: 100, clock: Date.now });

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
  consumers = await startCacheInvalidation({
    db: t.db,
    nats: nc,
    topology,
    cache,
    logger,
    instanceId: "test host.1",
  });
});

afterAll(async () => {
  for (const c of consumers) await c.stop();
  await deleteTestStreams(nc, topology);
  await nc.close();
  await t.db.destroy();
  await t.database.drop();
});

describe("cache invalidation from chain events", () => {
  it("chain.attestation_revoked drops the cached lookups of that agent, and only those", async () => {
    const agent = "0x3333333333333333333333333333333333333333";
    const other = "0x4444444444444444444444444444444444444444";
    const revokedId = `0x${"aa".repeat(32)}`;
    cache.set(addressKey(agent), entry(agent, revokedId));
    cache.set(didKey(didFromAddress(agent)), entry(agent, revokedId));
    cache.set(addressKey(other), entry(other, `0x${"bb".repeat(32)}`));

    const revoked: AttestationRevokedData = {
      attestationId: revokedId,
      revoker: other,
      revokerIden3Id: "1",
      recipientDid: didFromAddress(agent),
      recipientIden3Id: iden3IdFromAddress(agent),
      revocationTime: 1_800_000_000,
      registry: other,
      ...position,
    };
    await publish("attestation_revoked", revoked);
    await eventually(() => cache.get(addressKey(agent)) === undefined);
    expect(cache.get(didKey(didFromAddress(agent)))).toBeUndefined();
    expect(cache.get(addressKey(other))).toBeDefined();
    // Applied through the idempotent inbox, so a redelivery would not be applied twice.
    const inbox = await t.db.selectFrom("inbox").select("consumer").execute();
    expect(inbox.map((r) => r.consumer)).toEqual(["agent_auth_cache_revoked_test_host_1"]);
  });

  it("chain.blocks_reverted drops everything", async () => {
    const agent = "0x5555555555555555555555555555555555555555";
    cache.set(addressKey(agent), entry(agent, `0x${"cc".repeat(32)}`));
    const reverted: BlocksRevertedData = {
      chainId: 45056,
      fromBlock: 5,
      toBlock: 7,
      attestationIds: [],
      revokedAttestationIds: [],
      schemaIds: [],
    };
    await publish("blocks_reverted", reverted);
    await eventually(() => cache.size === 0);
  });
});
