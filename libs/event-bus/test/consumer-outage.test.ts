import { createDb } from "@humanpass/db";
import { sleep } from "@humanpass/retry";
import { eventually, TcpProxy } from "@humanpass/testing";
import { jetstream } from "@nats-io/jetstream";
import type { Kysely } from "kysely";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listDeadLetters, type RunningConsumer, startConsumer, subjectOf } from "../src/index.ts";
import {
  appliedCounts,
  type EventsTestContext,
  SCHEMA,
  setUpEventsTest,
  testEvent,
} from "./support/harness.ts";

const POISON = 1_000_000;
const OUTAGE_MS = 30_000;

let ctx: EventsTestContext;
let proxy: TcpProxy;
let consumerDb: Kysely<any>;
const lines: Array<{ level: number; msg: string; eventId?: string; error?: string }> = [];
const logger = pino({ level: "info" }, {
  write: (line: string) => void lines.push(JSON.parse(line)),
} as unknown as pino.DestinationStream);

beforeAll(async () => {
  ctx = await setUpEventsTest("events_outage");
  proxy = await TcpProxy.forUrl(ctx.database.url).start();
  consumerDb = createDb<any>({ connectionString: proxy.url(ctx.database.url), schema: SCHEMA, max: 4 });
});

afterAll(async () => {
  await consumerDb.destroy();
  await proxy.stop();
  await ctx.tearDown();
});

async function publish(events: ReturnType<typeof testEvent>[]) {
  const js = jetstream(ctx.nc);
  for (const e of events) {
    const event = { specversion: "1.0", id: crypto.randomUUID(), source: e.source, type: e.type };
    await js.publish(
      subjectOf(ctx.topology, e.stream, e.type),
      JSON.stringify({
        ...event,
        time: new Date().toISOString(),
        datacontenttype: "application/json",
        data: e.data,
      }),
    );
  }
}

describe("consumer during a Postgres outage", () => {
  it("applies every event once after 30 s without Postgres, and dead-letters only the poison one", async () => {
    let consumer: RunningConsumer | undefined;
    try {
      consumer = await startConsumer({
        db: consumerDb,
        nats: ctx.nc,
        topology: ctx.topology,
        stream: "AGENT_AUTH",
        durable: "outage",
        logger,
        batchSize: 50,
        handler: async (event, trx) => {
          const n = event.data.n as number;
          if (n === POISON) throw new Error("this handler refuses event n=1000000");
          await trx.insertInto("applied").values({ event_id: event.id, n }).execute();
        },
      });
      await publish(Array.from({ length: 200 }, (_, i) => testEvent(i)));
      await eventually(async () => (await appliedCounts(ctx.db)).total >= 50, 20_000, 5);

      proxy.cut();
      const cutAt = Date.now();
      await publish([
        ...Array.from({ length: 400 }, (_, i) => testEvent(200 + i)),
        testEvent(POISON),
        ...Array.from({ length: 400 }, (_, i) => testEvent(600 + i)),
      ]);
      await sleep(OUTAGE_MS - (Date.now() - cutAt));
      const duringOutage = (await appliedCounts(ctx.db)).total;
      expect(duringOutage).toBeLessThan(1_000);
      proxy.restore();

      await eventually(async () => (await appliedCounts(ctx.db)).total >= 1_000, 60_000, 50);
      await eventually(() => consumer!.stats.deadLettered === 1, 30_000, 50);
      expect(await appliedCounts(ctx.db)).toEqual({ total: 1_000, distinct: 1_000 });

      const dead = await listDeadLetters(ctx.nc, ctx.topology);
      expect(dead).toHaveLength(1);
      expect(dead[0]).toMatchObject({
        consumer: "outage",
        stream: "AGENT_AUTH",
        subject: subjectOf(ctx.topology, "AGENT_AUTH", "human_not_registered"),
        attempts: 5,
        error: "this handler refuses event n=1000000",
        event: { data: { n: POISON } },
      });
      const logged = lines.filter((l) => l.level >= 50);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ msg: expect.stringContaining("dead-letter") });
    } finally {
      proxy.restore();
      await consumer?.stop();
    }
  }, 150_000);
});
