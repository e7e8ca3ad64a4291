// The outbox relay and a consumer on a 3-node JetStream cluster (three nats-server processes on loopback ports),
// the stream at replicas 3, while the meta leader and then the stream's leader are killed and started again: every
// event written to the outbox is in the stream once and applied once. A node paused (cut off) loses its clients to the
// others while the pause lasts.
import { sleep } from "@humanpass/retry";
import {
  eventually,
  type NatsCluster,
  startNatsCluster,
  type TestDatabase,
  testTopology,
} from "@humanpass/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectNats,
  enqueue,
  ensureStreams,
  type OutboxRelay,
  type RunningConsumer,
  startConsumer,
  startOutboxRelay,
  streamName,
} from "../src/index.ts";
import { appliedCounts, logger, recordApplied, SCHEMA, setUpDatabase, testEvent } from "./support/harness.ts";

let cluster: NatsCluster;
let database: TestDatabase;
let db: Kysely<any>;
let relayNats: NatsConnection;
let consumerNats: NatsConnection;
let relay: OutboxRelay;
let consumer: RunningConsumer;
const topology = testTopology();
const stream = streamName(topology, "AGENT_AUTH");

beforeAll(async () => {
  [cluster, { database, db }] = await Promise.all([startNatsCluster(3), setUpDatabase("events_cluster")]);
  // As a service connects: every seed URL, reconnecting forever.
  relayNats = await connectNats(cluster.servers, logger, "relay");
  consumerNats = await connectNats(cluster.servers, logger, "consumer");
  await ensureStreams(await jetstreamManager(relayNats), topology, ["AGENT_AUTH"], { replicas: 3 });
  relay = startOutboxRelay({
    nats: relayNats,
    schema: SCHEMA,
    logger,
    connectionString: database.url,
    publishTimeoutMs: 2_000,
    maxBackoffMs: 1_000,
  });
  consumer = await startConsumer({
    db,
    nats: consumerNats,
    topology,
    stream: "AGENT_AUTH",
    durable: "cluster",
    logger,
    batchSize: 50,
    ackWaitMs: 5_000,
    handler: recordApplied,
  });
}, 60_000);

afterAll(async () => {
  await consumer?.stop();
  await relay?.stop();
  await relayNats?.close();
  await consumerNats?.close();
  await cluster?.stop();
  await db?.destroy();
  await database?.drop();
});

/** The stream's leader and whether every replica of it is current, as the cluster reports it now. */
async function streamCluster() {
  const { cluster: c } = await (await jetstreamManager(relayNats)).streams.info(stream);
  return {
    leader: c?.leader,
    current: (c?.replicas ?? []).length === 2 && (c?.replicas ?? []).every((r) => r.current && !r.offline),
  };
}

describe("outbox relay and consumer on a 3-node JetStream cluster, stream at replicas 3", () => {
  it("lose nothing and duplicate nothing while the meta leader, then the stream leader, is killed and restarted", async () => {
    let written = 0;
    let writing = true;
    // The producer: a transaction with its outbox rows every few milliseconds, as a service's writes.
    const producer = (async () => {
      while (writing) {
        await db.transaction().execute((trx) =>
          enqueue(
            trx,
            topology,
            Array.from({ length: 5 }, (_, i) => testEvent(written + i)),
          ),
        );
        written += 5;
        await sleep(10);
      }
    })();
    const publishedSince = async (count: number) => {
      const at = relay.stats.published;
      await eventually(() => relay.stats.published >= at + count, 60_000, 20);
    };

    try {
      await publishedSince(100);
      const victims = [await eventually(() => cluster.metaLeader()), (await streamCluster()).leader];
      for (const victim of victims) {
        expect(victim).toBeDefined();
        await cluster.kill(victim!);
        // The survivors elect a new leader; the relay publishes to it and the consumer follows.
        await eventually(
          async () => {
            const now = await streamCluster().catch(() => undefined);
            return now?.leader !== undefined && now.leader !== victim;
          },
          60_000,
          50,
        );
        await publishedSince(200);
        await cluster.restart(victim!);
        await eventually(async () => (await streamCluster().catch(() => undefined))?.current, 60_000, 100);
        await publishedSince(100);
      }
    } finally {
      writing = false;
      await producer;
    }

    await eventually(async () => (await appliedCounts(db)).total >= written, 60_000, 50);
    const pending = await db
      .selectFrom("outbox")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("published_at", "is", null)
      .executeTakeFirstOrThrow();
    expect(Number(pending.n)).toBe(0);
    const info = await (await jetstreamManager(relayNats)).streams.info(stream);
    expect(info.state.messages).toBe(written);
    expect(await appliedCounts(db)).toEqual({ total: written, distinct: written });
    expect(consumer.stats.deadLettered).toBe(0);
  }, 180_000);

  // At the client's default ping interval the connection would wait for the node for minutes (bounded here by 60 s).
  it("a connection whose node is cut off (paused, its connections left open) moves to another node meanwhile", async () => {
    const nc = await connectNats(cluster.servers, logger, "cut-off");
    const nodeOf = (server: string) => cluster.nodes.find((n) => n.url.endsWith(`//${server}`))?.name;
    const cutOff = nodeOf(nc.getServer());
    expect(cutOff).toBeDefined();
    cluster.pause(cutOff!);
    try {
      await eventually(async () => nodeOf(nc.getServer()) !== cutOff && (await nc.rtt()) >= 0, 60_000, 250);
    } finally {
      cluster.resume(cutOff!);
      await nc.close();
    }
  }, 90_000);
});
