import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sleep } from "@humanpass/retry";
import { eventually, type TestDatabase, testNatsUrl } from "@humanpass/testing";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createCloudEvent,
  enqueue,
  listDeadLetters,
  startConsumer,
  startOutboxRelay,
  streamName,
  subjectOf,
} from "../src/index.ts";
import {
  appliedCounts,
  type EventsTestContext,
  logger,
  recordApplied,
  SCHEMA,
  setUpEventsTest,
  testEvent,
} from "./support/harness.ts";

let ctx: EventsTestContext;
let database: TestDatabase;
let db: Kysely<any>;
let nc: NatsConnection;
let topology: { prefix: string };
const here = path.dirname(fileURLToPath(import.meta.url));

beforeAll(async () => {
  ctx = await setUpEventsTest("events_consumer");
  ({ database, db, nc, topology } = ctx);
});

afterAll(async () => {
  await ctx.tearDown();
});

async function publishThroughOutbox(events: ReturnType<typeof testEvent>[]) {
  await db.transaction().execute((trx) => enqueue(trx, topology, events));
  const relay = startOutboxRelay({
    nats: nc,
    schema: SCHEMA,
    logger,
    connectionString: database.url,
    pollIntervalMs: 20,
  });
  await eventually(async () => {
    const left = await db
      .selectFrom("outbox")
      .select(db.fn.countAll().as("n"))
      .where("published_at", "is", null)
      .executeTakeFirstOrThrow();
    return Number(left.n) === 0;
  });
  await relay.stop();
}

function startWorker(durable: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      "--conditions=@humanpass/source",
      path.join(here, "support/consumer-worker.ts"),
      database.url,
      testNatsUrl(),
      topology.prefix,
      durable,
      "2",
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d) => String(d).includes("ready") && resolve(child));
    child.on("exit", (code) => reject(new Error(`worker exited early (${code})`)));
  });
}

describe("inbox consumer", () => {
  it("applies every event exactly once when the consumer process is killed mid-way and restarted", async () => {
    await db.deleteFrom("applied").execute();
    await publishThroughOutbox(Array.from({ length: 1_000 }, (_, i) => testEvent(i)));

    const first = await startWorker("crash");
    await eventually(async () => (await appliedCounts(db)).total >= 200, 30_000, 5);
    first.kill("SIGKILL");
    await new Promise((r) => first.once("exit", r));
    const atKill = (await appliedCounts(db)).total;
    expect(atKill).toBeLessThan(1_000);

    const second = await startWorker("crash");
    try {
      await eventually(async () => (await appliedCounts(db)).total >= 1_000, 60_000);
      // Redeliveries of what the killed process had applied but not acked arrive after ack_wait (2 s).
      await sleep(3_000);
      expect(await appliedCounts(db)).toEqual({ total: 1_000, distinct: 1_000 });
    } finally {
      second.kill("SIGKILL");
    }
  });

  it("dead-letters a poison message after the configured attempts without blocking the ones behind it", async () => {
    await db.deleteFrom("applied").execute();
    const poisonAttempts = new Set<number>();
    const consumer = await startConsumer({
      db,
      nats: nc,
      topology,
      stream: "AGENT_AUTH",
      durable: "poison",
      logger,
      maxAttempts: 3,
      backoffMs: () => 50,
      handler: async (event, trx, delivery) => {
        const n = event.data.n as number;
        if (n === 5_000) {
          poisonAttempts.add(delivery.attempt);
          throw new Error("cannot apply this one");
        }
        await trx.insertInto("applied").values({ event_id: event.id, n }).execute();
      },
    });
    try {
      const before = (await appliedCounts(db)).total;
      expect(before).toBe(0);
      await publishThroughOutbox([
        testEvent(5_000),
        ...Array.from({ length: 20 }, (_, i) => testEvent(5_001 + i)),
      ]);
      await eventually(() => consumer.stats.deadLettered === 1, 20_000);
      await eventually(async () => {
        const rows = await db.selectFrom("applied").select("n").where("n", ">", 5_000).execute();
        return rows.length >= 20;
      });
      expect((await db.selectFrom("applied").select("n").where("n", ">", 5_000).execute()).length).toBe(20);
      expect([...poisonAttempts].sort()).toEqual([1, 2, 3]);
      const poisonApplied = await db.selectFrom("applied").select("n").where("n", "=", 5_000).execute();
      expect(poisonApplied).toEqual([]);
      expect(consumer.stats.deadLettered).toBe(1);
    } finally {
      await consumer.stop();
    }
  });

  it("dead-letters a message that is not a valid event at once, with its payload and the reason", async () => {
    const consumer = await startConsumer({
      db,
      nats: nc,
      topology,
      stream: "AGENT_AUTH",
      durable: "invalid",
      logger,
      handler: async () => {},
    });
    try {
      const deadBefore = consumer.stats.deadLettered;
      const { jetstream } = await import("@nats-io/jetstream");
      await jetstream(nc).publish(
        `${topology.prefix}.agent_auth.human_not_registered`,
        JSON.stringify({ hello: "world" }),
      );
      await eventually(() => consumer.stats.deadLettered > deadBefore);
      const letters = await listDeadLetters(nc, topology, { consumer: "invalid" });
      expect(letters).toEqual([
        expect.objectContaining({
          consumer: "invalid",
          attempts: 1,
          payload: JSON.stringify({ hello: "world" }),
          error: expect.stringMatching(/^invalid event: not a CloudEvent/),
        }),
      ]);
    } finally {
      await consumer.stop();
    }
  });

  it("refuses an event from anyone but the stream's owner, or on another type's subject, and never sees it again", async () => {
    await db.deleteFrom("applied").execute();
    const consumer = await startConsumer({
      db,
      nats: nc,
      topology,
      stream: "AGENT_AUTH",
      durable: "owner_check",
      logger,
      // Short enough that a termination NATS did not take (2.9 ignores `+TERM <reason>`) shows as a redelivery.
      ackWaitMs: 1_000,
      handler: recordApplied,
    });
    try {
      const js = jetstream(nc);
      // Numbered below every other test's events, which share this stream.
      const genuine = testEvent(-900);
      const notFromOwner = createCloudEvent({ ...testEvent(-901), source: "payment-gateway" });
      const wrongSubject = createCloudEvent(testEvent(-902));
      // The durable starts at the stream's first message: what earlier tests published comes first.
      const first = await js.publish(
        subjectOf(topology, "AGENT_AUTH", genuine.type),
        JSON.stringify(createCloudEvent(genuine)),
      );
      await js.publish(
        subjectOf(topology, "AGENT_AUTH", "human_not_registered"),
        JSON.stringify(notFromOwner),
      );
      // A human_not_registered event on the claim_accepted subject: whoever filters on the subject is misled.
      const last = await js.publish(
        subjectOf(topology, "AGENT_AUTH", "claim_accepted"),
        JSON.stringify(wrongSubject),
      );

      const jsm = await jetstreamManager(nc);
      const stream = streamName(topology, "AGENT_AUTH");
      // Everything up to the last one settled: applied, or terminated and never to be delivered again.
      await eventually(async () => {
        const info = await jsm.consumers.info(stream, "owner_check");
        return info.ack_floor.stream_seq >= last.seq && info.num_ack_pending === 0 && info.num_pending === 0;
      }, 15_000);
      const letters = (await listDeadLetters(nc, topology, { consumer: "owner_check" })).filter(
        (l) => l.streamSeq > first.seq,
      );
      expect(
        letters.map((l) => ({ id: (l.event as { id: string }).id, error: l.error, stream: l.stream })),
      ).toEqual([
        {
          id: notFromOwner.id,
          error: `invalid event: event from payment-gateway on stream AGENT_AUTH, whose events come from agent-auth`,
          stream: "AGENT_AUTH",
        },
        {
          id: wrongSubject.id,
          error: `invalid event: human_not_registered event on subject ${subjectOf(topology, "AGENT_AUTH", "claim_accepted")}, not ${subjectOf(topology, "AGENT_AUTH", "human_not_registered")}`,
          stream: "AGENT_AUTH",
        },
      ]);
      expect(letters[1]!.streamSeq).toBe(last.seq);
      const applied = await db
        .selectFrom("applied")
        .select("n")
        .where("n", "in", [-900, -901, -902])
        .execute();
      expect(applied.map((r) => r.n)).toEqual([-900]);
    } finally {
      await consumer.stop();
    }
  });

  it("hands a batch handler each new event once, in stream order, and skips redelivered ids", async () => {
    await db.deleteFrom("applied").execute();
    const seen: number[] = [];
    const consumer = await startConsumer({
      db,
      nats: nc,
      topology,
      stream: "AGENT_AUTH",
      durable: "batch",
      logger,
      type: "human_not_registered",
      batchHandler: async (events, trx) => {
        seen.push(...events.map((e) => e.data.n as number));
        await trx
          .insertInto("applied")
          .values(events.map((e) => ({ event_id: e.id, n: e.data.n })))
          .execute();
      },
    });
    try {
      const before = consumer.stats.applied;
      await publishThroughOutbox(Array.from({ length: 50 }, (_, i) => testEvent(9_000 + i)));
      // The same CloudEvents published again under new message ids reach the consumer a second time.
      const again = await db.selectFrom("outbox").select("event").orderBy("seq", "desc").limit(10).execute();
      const { jetstream } = await import("@nats-io/jetstream");
      for (const { event } of again) {
        await jetstream(nc).publish(
          `${topology.prefix}.agent_auth.human_not_registered`,
          JSON.stringify(event),
        );
      }
      await eventually(() => consumer.stats.duplicates >= 10);
      const mine = seen.filter((n) => n >= 9_000);
      expect(mine).toEqual(Array.from({ length: 50 }, (_, i) => 9_000 + i));
      expect(consumer.stats.applied - before).toBeGreaterThanOrEqual(50);
      const rows = await db.selectFrom("applied").select("n").where("n", ">=", 9_000).execute();
      expect(rows).toHaveLength(50);
    } finally {
      await consumer.stop();
    }
  });

  it("applies an event delivered twice in one batch once", async () => {
    const event = createCloudEvent({
      source: "agent-auth",
      type: "human_not_registered",
      data: testEvent(9_500).data,
    });
    // Two messages of one CloudEvent, stored before a new durable starts: its first pull delivers both, behind
    // the stream's earlier messages.
    for (let copy = 0; copy < 2; copy++) {
      await jetstream(nc).publish(
        subjectOf(topology, "AGENT_AUTH", "human_not_registered"),
        JSON.stringify(event),
      );
    }
    const batches: string[][] = [];
    const consumer = await startConsumer({
      db,
      nats: nc,
      topology,
      stream: "AGENT_AUTH",
      durable: "twice",
      logger,
      type: "human_not_registered",
      batchHandler: async (events, trx) => {
        batches.push(events.map((e) => e.id));
        await trx
          .insertInto("applied")
          .values(events.map((e) => ({ event_id: e.id, n: e.data.n })))
          .execute();
      },
    });
    try {
      await eventually(() => batches.flat().includes(event.id));
      const jsm = await jetstreamManager(nc);
      await eventually(async () => {
        const info = await jsm.consumers.info(streamName(topology, "AGENT_AUTH"), "twice");
        return info.num_pending === 0 && info.num_ack_pending === 0;
      });
      expect(batches.flat().filter((id) => id === event.id)).toHaveLength(1);
      expect(await db.selectFrom("applied").select("n").where("event_id", "=", event.id).execute()).toEqual([
        { n: 9_500 },
      ]);
    } finally {
      await consumer.stop();
    }
  });
});
