// webhooks: how long a healthy endpoint waits for its deliveries while another endpoint does not answer.
// Events are published to JetStream at BENCH_RATE events/s (default 20) for BENCH_SECONDS (default 10); the
// service's ingest turns each into one delivery per endpoint and its delivery worker (the shipped defaults of
// WEBHOOK_CONCURRENCY, WEBHOOK_ENDPOINT_CONCURRENCY, WEBHOOK_TIMEOUT_MS and WEBHOOK_IDLE_MS) POSTs them to receivers
// on 127.0.0.1, all in this process. Prints, per scenario, the healthy endpoint's delays (p50, p99, max) from its
// delivery being queued to its arrival at the receiver (the worker's share), and from the event's time (ingest
// included): the healthy endpoint alone, beside a silent endpoint (accepts the connection, never answers), and
// beside a trickling one (answers 200, then a body byte every 20 ms, forever), the stalled endpoint starting with a
// backlog of BENCH_BACKLOG (default 20,000) due deliveries.

import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg } from "node:os";
import { createDb, dropDatabase, ensureDatabase, migrateToLatest, sql } from "@humanpass/db";
import {
  connectNats,
  createCloudEvent,
  deletePrefixedStreams,
  ensureStreams,
  jetstreamManager,
  STREAMS,
  type StreamName,
  subjectOf,
} from "@humanpass/event-bus";
import { sleep } from "@humanpass/retry";
import { systemClock } from "@humanpass/service";
import {
  createAddressPolicy,
  createDeliveryWorker,
  migrations,
  SCHEMA,
  startIngest,
  type WebhooksDb,
  WebhooksEnv,
} from "@humanpass/webhooks";
import { jetstream } from "@nats-io/jetstream";
import pino from "pino";

const RATE = Number(process.env.BENCH_RATE ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 20_000);
const logger = pino({ level: "warn" });
const defaults = {
  concurrency: WebhooksEnv.properties.WEBHOOK_CONCURRENCY.default as number,
  endpointConcurrency: WebhooksEnv.properties.WEBHOOK_ENDPOINT_CONCURRENCY.default as number,
  attemptTimeoutMs: WebhooksEnv.properties.WEBHOOK_TIMEOUT_MS.default as number,
  idleMs: WebhooksEnv.properties.WEBHOOK_IDLE_MS.default as number,
};

type Behaviour = "healthy" | "silent" | "trickle";

/** A receiver on 127.0.0.1; `arrivals` maps each webhook-id the healthy one accepted to when it arrived. */
async function startReceiver(behaviour: Behaviour, arrivals: Map<string, number>) {
  const trickles = new Set<NodeJS.Timeout>();
  const server: Server = createServer((request, response) => {
    request.resume();
    if (behaviour === "silent") return;
    if (behaviour === "healthy") {
      request.on("end", () => {
        arrivals.set(String(request.headers["webhook-id"]), Date.now());
        response.writeHead(204).end();
      });
      return;
    }
    response.writeHead(200);
    const timer = setInterval(() => response.write("."), 20);
    trickles.add(timer);
    response.on("close", () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of trickles) clearInterval(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function scenario(beside: Behaviour | undefined): Promise<string> {
  const base = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
  base.pathname = `/bench_webhooks_${randomBytes(4).toString("hex")}`;
  const url = base.toString();
  const topology = { prefix: `bench${randomBytes(4).toString("hex")}` };
  await ensureDatabase(url);
  const db = createDb<WebhooksDb>({ connectionString: url, schema: SCHEMA, max: 10 });
  await migrateToLatest(db, { schema: SCHEMA, migrations });
  const nats = await connectNats(process.env.NATS_URL ?? "nats://127.0.0.1:4222", logger);
  const jsm = await jetstreamManager(nats);
  await ensureStreams(jsm, topology, Object.keys(STREAMS) as StreamName[]);

  const arrivals = new Map<string, number>();
  const receivers = [await startReceiver("healthy", arrivals)];
  if (beside) receivers.push(await startReceiver(beside, arrivals));
  for (const receiver of receivers)
    await db
      .insertInto("endpoints")
      .values({
        url: receiver.url,
        event_types: ["agent_auth.human_verified"],
        secrets: [`whsec_${randomBytes(24).toString("base64")}`],
        created_at: new Date(),
      })
      .execute();
  // The stalled endpoint starts with a backlog older than every new event: claims must not wade through it.
  if (beside)
    await sql`
      insert into deliveries (endpoint_id, event_id, subject, event, status, next_attempt_at, retrying_since)
      select e.id, 'backlog-' || n, 'agent_auth.human_verified', '{}'::jsonb, 'pending', now() - interval '1 hour',
        now() - interval '1 hour'
      from endpoints e, generate_series(1, ${BACKLOG}) n where e.url = ${receivers[1]!.url}`.execute(db);

  const consumers = await startIngest({ db, nats, topology, logger, clock: systemClock });
  const worker = createDeliveryWorker({
    db,
    policy: createAddressPolicy(["127.0.0.1/32"]),
    logger,
    clock: systemClock,
    retryWindowMs: 86_400_000,
    ...defaults,
  });
  worker.start(defaults.idleMs);

  const js = jetstream(nats);
  const sent = new Map<string, number>();
  const started = Date.now();
  for (let n = 0; n < RATE * SECONDS; n++) {
    const due = started + (n * 1000) / RATE;
    if (due > Date.now()) await sleep(due - Date.now());
    const event = createCloudEvent({
      source: "agent-auth",
      type: "human_verified",
      data: {
        humanId: String(n),
        verifiedAt: new Date().toISOString(),
        humanDid: "did:bench",
        resource: "https://r",
      },
    });
    await js.publish(subjectOf(topology, "AGENT_AUTH", "human_verified"), JSON.stringify(event), {
      msgID: event.id,
    });
    sent.set(event.id, Date.parse(event.time));
  }
  while (arrivals.size < sent.size) await sleep(50);

  // When each delivery to the healthy endpoint was queued (due at once): the worker's share of the delay starts there.
  const queued = new Map(
    (
      await db
        .selectFrom("deliveries")
        .innerJoin("endpoints", "endpoints.id", "deliveries.endpoint_id")
        .select(["event_id", "retrying_since"])
        .where("endpoints.url", "=", receivers[0]!.url)
        .execute()
    ).map((r) => [r.event_id, r.retrying_since.getTime()]),
  );
  for (const receiver of receivers) await receiver.close();
  await worker.stop();
  await Promise.all(consumers.map((c) => c.stop()));
  await deletePrefixedStreams(jsm, topology);
  await nats.close();
  await db.destroy();
  await dropDatabase(url);

  const summary = (values: number[]) => {
    const sorted = values.sort((a, b) => a - b);
    return `p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted.at(-1)} ms`;
  };
  const endToEnd = [...sent].map(([id, at]) => arrivals.get(id)! - at);
  const delivery = [...sent].map(([id]) => arrivals.get(id)! - queued.get(id)!);
  return [
    `healthy endpoint${beside ? ` beside a ${beside} one (backlog ${BACKLOG})` : " alone"}: ${sent.size} deliveries; load average (1 min) ${loadavg()[0]!.toFixed(2)}`,
    `  queued → arrived (delivery): ${summary(delivery)}`,
    `  event time → arrived (ingest and delivery): ${summary(endToEnd)}`,
  ].join("\n");
}

console.log(
  `${RATE} events/s for ${SECONDS} s; WEBHOOK_CONCURRENCY=${defaults.concurrency}, WEBHOOK_ENDPOINT_CONCURRENCY=${defaults.endpointConcurrency}, WEBHOOK_TIMEOUT_MS=${defaults.attemptTimeoutMs}, WEBHOOK_IDLE_MS=${defaults.idleMs}`,
);
for (const beside of [undefined, "silent", "trickle"] as const) console.log(await scenario(beside));
