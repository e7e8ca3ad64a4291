/**
 * Two replicas of agent-auth (two apps over one database, each with its own registry cache and its own
 * subscriptions to CHAIN's revocation subjects, as deployed) and a real attestations API stand-in over HTTP. Each
 * replica caches the human behind an agent; the stand-in then stops listing the pairing, so only the cache still
 * says "paired". One `chain.attestation_revoked` must make both replicas ask again; a restart or a lost connection
 * must too.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  type AttestationRevokedData,
  type ChainInvalidations,
  createCloudEvent,
  ensureStreams,
  followChainInvalidations,
  jetstreamManager,
  subjectOf,
} from "@humanpass/event-bus";
import { didFromAddress, iden3IdFromAddress } from "@humanpass/identity";
import { connectTestNats, deleteTestStreams, eventually, testTopology } from "@humanpass/testing";
import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRegistry } from "../src/index.ts";
import {
  agentClient,
  logger,
  type RunningAgentAuth,
  setUpDatabase,
  startAgentAuth,
  type TestDb,
  testTerms,
} from "./harness.ts";

const topology = testTopology();
const terms = testTerms();
const HUMAN = "0x4444444444444444444444444444444444444444";
const agent = privateKeyToAccount(generatePrivateKey());
const otherAgent = privateKeyToAccount(generatePrivateKey());

/** What the registry lists: one ownership record per paired agent (by lower-case address), and how often it was asked. */
const registry = { pairings: new Map<string, string>(), lookups: 0 };
let attestations = 0;

let api: http.Server;
let apiUrl: string;
let nc: NatsConnection;
let t: TestDb;
type Replica = { service: RunningAgentAuth; invalidations: ChainInvalidations; restart(): Promise<void> };
let replicas: Replica[] = [];

function startApi(): Promise<void> {
  api = http.createServer((req, res) => {
    const url = new URL(req.url!, "http://api");
    res.setHeader("content-type", "application/json");
    if (url.pathname === "/api/v1/nullifier") {
      res.end(JSON.stringify({ userId: url.searchParams.get("userId"), nullifier: "424242" }));
      return;
    }
    registry.lookups++;
    const address = url.searchParams.get("recipientEthereumAddress") ?? "";
    const id = registry.pairings.get(address.toLowerCase());
    const data =
      id && url.searchParams.get("schemaId") === terms.ownershipSchema
        ? [
            {
              id,
              creationTime: 1_800_000_000,
              fromId: iden3IdFromAddress(HUMAN),
              fromDid: didFromAddress(HUMAN),
              toDid: didFromAddress(address),
              fromEthereumAddress: HUMAN,
              toEthereumAddress: address,
            },
          ]
        : [];
    res.end(JSON.stringify({ totalItems: data.length, nextPage: null, data }));
  });
  return new Promise((resolve) => api.listen(0, "127.0.0.1", resolve));
}

async function startReplica(): Promise<Replica> {
  const { resolver, cache } = createRegistry({
    attestationsApiUrl: apiUrl,
    timeoutMs: 1_000,
    retries: 0,
    ownershipSchema: terms.ownershipSchema,
    cacheTtlMs: 600_000,
    cacheMaxEntries: 100,
    clock: Date.now,
    logger,
  });
  const service = await startAgentAuth({ db: t.db, pool: t.pool, resolver, terms, topology });
  const follow = () => followChainInvalidations({ nats: nc, topology, logger, cache });
  const replica: Replica = {
    service,
    invalidations: await follow(),
    async restart() {
      await replica.invalidations.stop();
      replica.invalidations = await follow();
    },
  };
  return replica;
}

/** A direct claim through one replica, as the agent sees it: 200 verified, 403 not_registered. */
async function claim(replica: Replica, who = agent): Promise<number> {
  const client = agentClient(replica.service.url);
  return (await client.claimWithBody(await client.directClaimBody(who))).status;
}

/**
 * Pairs the agents through new attestations, claims once through each replica, then unpairs them in the
 * registry: each replica now says "verified" only from its cache, without asking the registry again.
 */
async function cacheInBothReplicas(agents = [agent]): Promise<Map<string, string>> {
  const ids = new Map(agents.map((a) => [a.address, `0x${(++attestations).toString(16).padStart(64, "0")}`]));
  for (const [address, id] of ids) registry.pairings.set(address.toLowerCase(), id);
  for (const replica of replicas) for (const a of agents) expect(await claim(replica, a)).toBe(200);
  registry.pairings.clear();
  const lookups = registry.lookups;
  for (const replica of replicas) for (const a of agents) expect(await claim(replica, a)).toBe(200);
  expect(registry.lookups).toBe(lookups);
  return ids;
}

async function publishRevocation(attestationId: string, recipient: string): Promise<void> {
  const data: AttestationRevokedData = {
    attestationId,
    revoker: HUMAN,
    revokerIden3Id: iden3IdFromAddress(HUMAN),
    recipientDid: didFromAddress(recipient),
    recipientIden3Id: iden3IdFromAddress(recipient),
    revocationTime: 1_800_000_100,
    registry: HUMAN,
    chainId: 45056,
    blockNumber: 9,
    blockHash: `0x${"0b".repeat(32)}`,
    logIndex: 0,
    txHash: `0x${"0c".repeat(32)}`,
  };
  const event = createCloudEvent({ source: "chain-indexer", type: "attestation_revoked", data });
  await jetstream(nc).publish(subjectOf(topology, "CHAIN", "attestation_revoked"), JSON.stringify(event), {
    msgID: event.id,
  });
}

/** Resolves at the connection's next `reconnect` status. */
async function reconnected(connection: NatsConnection): Promise<void> {
  for await (const status of connection.status()) if (status.type === "reconnect") return;
}

beforeAll(async () => {
  await startApi();
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  t = await setUpDatabase("agent_auth_invalidation");
  nc = await connectTestNats();
  await ensureStreams(await jetstreamManager(nc), topology, ["CHAIN"]);
  replicas = [await startReplica(), await startReplica()];
});

afterAll(async () => {
  for (const { service, invalidations } of replicas) {
    await invalidations.stop();
    await service.close();
  }
  await deleteTestStreams(nc, topology);
  await nc.close();
  await t.db.destroy();
  await t.database.drop();
  api.closeAllConnections();
  await new Promise((resolve) => api.close(resolve));
});

describe("cache invalidation from chain events, in every replica", () => {
  it("one chain.attestation_revoked makes both replicas drop that agent's human, and only that one", async () => {
    const ids = await cacheInBothReplicas([agent, otherAgent]);
    await publishRevocation(ids.get(otherAgent.address)!, otherAgent.address);
    for (const replica of replicas) {
      await eventually(async () => (await claim(replica, otherAgent)) === 403);
      expect(await claim(replica, agent)).toBe(200);
    }
  });

  it("a restarted consumer clears its replica's cache: what it missed meanwhile cannot survive", async () => {
    await cacheInBothReplicas();
    const [restarted, untouched] = replicas as [Replica, Replica];
    await restarted.restart();
    expect(await claim(restarted)).toBe(403);
    expect(await claim(untouched)).toBe(200);
  });

  it("a lost connection clears every replica's cache, and revocations arrive again once it is back", async () => {
    await cacheInBothReplicas();
    // Both replicas follow over this one connection: what was published while it was down, they never saw.
    const back = reconnected(nc);
    await nc.reconnect();
    for (const replica of replicas) await eventually(async () => (await claim(replica)) === 403);
    // A revocation published before the connection is back would wait in the client's buffer (and time out on a
    // slow host): "once it is back" starts with the reconnect.
    await back;
    const ids = await cacheInBothReplicas();
    await publishRevocation(ids.get(agent.address)!, agent.address);
    for (const replica of replicas) await eventually(async () => (await claim(replica)) === 403);
  });
});
