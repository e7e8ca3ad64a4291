// Events committed in the producer's transaction → outbox relay → JetStream → inbox consumer applies them.
// Prints events/s (first commit to last apply) and the commit → applied latency p50/p95/p99.
// Either a burst (BENCH_EVENTS, default 10,000, as fast as BENCH_PRODUCERS can commit) or, with BENCH_RATE, a
// sustained rate: BENCH_RATE events/s for BENCH_SECONDS (default 60), each producer waiting for the schedule.
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import { createDb, dropDatabase, ensureDatabase, migrateToLatest, sql } from "@humanpass/db";
import {
  connectNats,
  enqueue,
  ensureStreams,
  jetstreamManager,
  outboxMigration,
  startConsumer,
  startOutboxRelay,
  streamName,
} from "@humanpass/event-bus";
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
await migrateToLatest(db, { schema: "bench", migrations: { "0001_outbox": outboxMigration } });
await sql`create table bench.applied (event_id text primary key)`.execute(db);
const nats = await connectNats(process.env.NATS_URL ?? "nats://127.0.0.1:4222", logger);
const jsm = await jetstreamManager(nats);
await ensureStreams(jsm, topology, ["AGENT_AUTH"]);

const latencies: number[] = [];
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
    for (const e of events) latencies.push(lastApplied - Date.parse(e.time));
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
let next = 0;
await Promise.all(
  Array.from({ length: PRODUCERS }, async () => {
    while (next < TOTAL) {
      if (RATE) {
        const due = started + (next * 1000) / RATE;
        if (due > Date.now()) {
          await new Promise((r) => setTimeout(r, due - Date.now()));
          continue;
        }
      }
      const n = Math.min(PER_TX, TOTAL - next);
      next += n;
      await db.transaction().execute((trx) =>
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
    }
  }),
);
const committed = Date.now();
while (latencies.length < TOTAL) await new Promise((r) => setTimeout(r, 20));

await consumer.stop();
await relay.stop();
await jsm.streams.delete(streamName(topology, "AGENT_AUTH"));
await nats.close();
await db.destroy();
await dropDatabase(url);

latencies.sort((a, b) => a - b);
const pct = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
const seconds = (lastApplied - started) / 1000;
console.log(
  `events: ${TOTAL} in ${PER_TX}-event transactions from ${PRODUCERS} producers${RATE ? `, scheduled at ${RATE} events/s` : ", a burst"}`,
);
console.log(
  `producers committed all in ${((committed - started) / 1000).toFixed(2)} s (${Math.round(TOTAL / ((committed - started) / 1000))} events/s)`,
);
console.log(`commit → applied: ${Math.round(TOTAL / seconds)} events/s end to end (${seconds.toFixed(2)} s)`);
console.log(
  `latency commit → applied: p50 ${pct(50)} ms, p95 ${pct(95)} ms, p99 ${pct(99)} ms, max ${latencies.at(-1)} ms; load average (1 min) ${loadavg()[0]!.toFixed(2)}`,
);
