// Events committed in the producer's transaction → outbox relay → JetStream → inbox consumer applies them.
// Prints events/s (first commit to last apply) and the commit → applied latency p50/p95/p99, split into its stages:
// event created → its transaction committed (the producer), → stored in the stream (the relay: a plain
// subscription on the stream's subjects sees each message as JetStream stores it), → applied (the consumer); and
// this process's event-loop delay, since producers, relay and consumer share its one thread.
// Either a burst (BENCH_EVENTS, default 10,000, as fast as BENCH_PRODUCERS can commit) or, with BENCH_RATE, a
// sustained rate: BENCH_RATE events/s for BENCH_SECONDS (default 60), each producer waiting for the schedule.

import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createDb, dropDatabase, ensureDatabase, migrateToLatest, sql } from "@humanpass/db";
import {
  connectNats,
  disableOutboxNotifyMigration,
  enqueue,
  ensureStreams,
  jetstreamManager,
  outboxMigration,
  startConsumer,
  startOutboxRelay,
  streamName,
  subjectOf,
} from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import pino from "pino";

const RATE = Number(process.env.BENCH_RATE ?? 0);
const TOTAL = RATE
  ? RATE * Number(process.env.BENCH_SECONDS ?? 60)
  : Number(process.env.BENCH_EVENTS ?? 10_000);
const PER_TX = Number(process.env.BENCH_PER_TX ?? 20);
const PRODUCERS = Number(process.env.BENCH_PRODUCERS ?? 4);
const logger = pino({ level: "warn" });
const base = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
base.pathname = `/bench_outbox_${randomBytes(4).toString("hex")}`;
const url = base.toString();
const topology = { prefix: `bench${randomBytes(4).toString("hex")}` };

await ensureDatabase(url);
const db = createDb<any>({ connectionString: url, schema: "bench", max: 12 });
await migrateToLatest(db, {
  schema: "bench",
  migrations: { "0001_outbox": outboxMigration, "0002_disable_outbox_notify": disableOutboxNotifyMigration },
});
await sql`create table bench.applied (event_id text primary key)`.execute(db);
const nats = await connectNats(process.env.NATS_URL ?? "nats://127.0.0.1:4222", logger);
const jsm = await jetstreamManager(nats);
await ensureStreams(jsm, topology, ["AGENT_AUTH"]);

const latencies: number[] = [];
const created = new Map<string, number>();
const committedAt = new Map<string, number>();
const storedAt = new Map<string, number>();
const stages = { commit: [] as number[], relay: [] as number[], apply: [] as number[] };
// Core NATS delivers a stream's message to plain subscribers once JetStream has it stored.
const observer = nats.subscribe(subjectOf(topology, "AGENT_AUTH", "human_not_registered"), {
  callback: (_error, msg) => {
    const id = msg.headers?.get("Nats-Msg-Id");
    if (id) storedAt.set(id, Date.now());
  },
});
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
let lastApplied = 0;
const consumer = await startConsumer({
  db,
  nats,
  topology,
  stream: "AGENT_AUTH",
  durable: "bench",
  logger,
  batchSize: 500,
  batchHandler: async (events, trx) => {
    await trx
      .insertInto("applied")
      .values(events.map((e) => ({ event_id: e.id })))
      .execute();
    lastApplied = Date.now();
    for (const e of events) {
      latencies.push(lastApplied - Date.parse(e.time));
      const stored = storedAt.get(e.id);
      if (stored !== undefined) stages.apply.push(lastApplied - stored);
    }
  },
});
const relay = startOutboxRelay({
  nats,
  schema: "bench",
  logger,
  connectionString: url,
  batchSize: Number(process.env.BENCH_RELAY_BATCH ?? 500),
});

const started = Date.now();
loopDelay.enable();
let next = 0;
await Promise.all(
  Array.from({ length: PRODUCERS }, async () => {
    while (next < TOTAL) {
      if (RATE) {
        const due = started + (next * 1000) / RATE;
        if (due > Date.now()) {
          await sleep(due - Date.now());
          continue;
        }
      }
      const n = Math.min(PER_TX, TOTAL - next);
      next += n;
      const written = await db.transaction().execute((trx) =>
        enqueue(
          trx,
          topology,
          Array.from({ length: n }, (_, i) => ({
            stream: "AGENT_AUTH" as const,
            source: "agent-auth",
            type: "human_not_registered",
            data: { did: `did:bench:${i}`, resource: "https://bench.example/r" },
          })),
        ),
      );
      relay.wake();
      const now = Date.now();
      for (const e of written) {
        created.set(e.id, Date.parse(e.time));
        committedAt.set(e.id, now);
      }
    }
  }),
);
const committed = Date.now();
while (latencies.length < TOTAL) await sleep(20);

loopDelay.disable();
observer.unsubscribe();
for (const [id, time] of created) {
  const commit = committedAt.get(id)!;
  const stored = storedAt.get(id);
  stages.commit.push(commit - time);
  if (stored !== undefined) stages.relay.push(stored - commit);
}

await consumer.stop();
await relay.stop();
await jsm.streams.delete(streamName(topology, "AGENT_AUTH"));
await nats.close();
await db.destroy();
await dropDatabase(url);

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const summary = (values: number[]) => {
  const sorted = values.sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50)} ms, p95 ${percentile(sorted, 95)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted.at(-1)} ms`;
};
const seconds = (lastApplied - started) / 1000;
console.log(
  `events: ${TOTAL} in ${PER_TX}-event transactions from ${PRODUCERS} producers${RATE ? `, scheduled at ${RATE} events/s` : ", a burst"}`,
);
console.log(
  `producers committed all in ${((committed - started) / 1000).toFixed(2)} s (${Math.round(TOTAL / ((committed - started) / 1000))} events/s)`,
);
console.log(`commit → applied: ${Math.round(TOTAL / seconds)} events/s end to end (${seconds.toFixed(2)} s)`);
console.log(
  `latency commit → applied: ${summary(latencies)}; load average (1 min) ${loadavg()[0]!.toFixed(2)}`,
);
console.log(`  created → committed (producer): ${summary(stages.commit)}`);
console.log(`  committed → stored in the stream (relay): ${summary(stages.relay)}`);
console.log(
  `  stored → applied (consumer, ${stages.apply.length} of ${TOTAL} seen stored): ${summary(stages.apply)}`,
);
const ms = (ns: number) => (ns / 1e6).toFixed(1);
console.log(
  `  event-loop delay of this process: p50 ${ms(loopDelay.percentile(50))} ms, p99 ${ms(loopDelay.percentile(99))} ms, max ${ms(loopDelay.max)} ms`,
);
