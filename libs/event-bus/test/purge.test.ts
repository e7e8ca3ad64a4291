/**
 * What keeps the outbox and the inbox bounded, against real Postgres and NATS: the bounded statements that delete
 * published outbox rows past their retention and inbox rows whose events their streams can no longer deliver, run by
 * replicas at the same time. (libs/service runs them every PURGE_INTERVAL_MS.)
 */

import { jetstreamManager } from "@nats-io/jetstream";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  enqueue,
  ensureStreams,
  inboxRetentionMs,
  purgeInbox,
  purgeOutbox,
  streamName,
} from "../src/index.ts";
import { type EventsTestContext, setUpEventsTest, testEvent } from "./support/harness.ts";

const HOUR_MS = 3_600_000;
let ctx: EventsTestContext;
let db: Kysely<any>;

beforeAll(async () => {
  ctx = await setUpEventsTest("events_purge");
  ({ db } = ctx);
});

afterAll(async () => {
  await ctx.tearDown();
});

const count = async (table: string, where = sql`true`) =>
  Number(
    (await sql<{ n: string }>`select count(*) as n from ${sql.table(table)} where ${where}`.execute(db))
      .rows[0]!.n,
  );

/** One replica's purge round: bounded statements until one deletes less than a batch; the rows it deleted. */
async function round(statement: (batchSize: number) => Promise<number>, batchSize: number): Promise<number> {
  let total = 0;
  for (let n = batchSize; n === batchSize; total += n) n = await statement(batchSize);
  return total;
}

describe("outbox purge", () => {
  it("deletes published rows past OUTBOX_RETENTION_MS in bounded statements, with two replicas at once, never unpublished ones", async () => {
    await db.transaction().execute((trx) =>
      enqueue(
        trx,
        ctx.topology,
        Array.from({ length: 130 }, (_, i) => testEvent(i)),
      ),
    );
    // 100 published two hours ago, 20 published ten minutes ago, 10 never published (created two hours ago).
    await sql`update outbox set published_at = now() - interval '2 hours' where seq in (select seq from outbox order by seq limit 100)`.execute(
      db,
    );
    await sql`update outbox set published_at = now() - interval '10 minutes' where seq in (select seq from outbox where published_at is null order by seq limit 20)`.execute(
      db,
    );
    await sql`update outbox set created_at = now() - interval '2 hours'`.execute(db);
    const deleted = await Promise.all(
      [0, 1].map(() => round((batchSize) => purgeOutbox(db, HOUR_MS, batchSize), 7)),
    );
    expect(deleted[0]! + deleted[1]!).toBe(100);
    expect(await count("outbox")).toBe(30);
    expect(await count("outbox", sql`published_at is null`)).toBe(10);
    expect(await count("outbox", sql`published_at > now() - interval '1 hour'`)).toBe(20);
  });
});

describe("inbox purge", () => {
  const inboxRows = async (where = sql`true`) =>
    Number((await sql<{ n: string }>`select count(*) as n from inbox where ${where}`.execute(db)).rows[0]!.n);

  async function fillInbox() {
    await sql`truncate inbox`.execute(db);
    // 95 applied three hours ago, 5 applied two hours ago, 10 just now.
    await sql`
      insert into inbox (consumer, event_id, processed_at)
      select 'c', 'old-' || i, now() - interval '3 hours' from generate_series(1, 95) i
      union all select 'c', 'mid-' || i, now() - interval '2 hours' from generate_series(1, 5) i
      union all select 'c', 'new-' || i, now() from generate_series(1, 10) i`.execute(db);
  }

  it("keeps rows for the longest max_age of the service's streams plus the margin, purging with two replicas at once", async () => {
    const jsm = await jetstreamManager(ctx.nc);
    // CHAIN keeps an hour, PAYMENTS two: the inbox must keep 2 h + margin (30 min).
    await ensureStreams(jsm, ctx.topology, ["CHAIN", "PAYMENTS"], {
      retention: {
        CHAIN: { maxAgeMs: HOUR_MS, maxBytes: -1 },
        PAYMENTS: { maxAgeMs: 2 * HOUR_MS, maxBytes: -1 },
      },
    });
    const streams = [streamName(ctx.topology, "CHAIN"), streamName(ctx.topology, "PAYMENTS")];
    const retainMs = await inboxRetentionMs(jsm, streams, HOUR_MS / 2);
    expect(retainMs).toBe(2.5 * HOUR_MS);
    await fillInbox();
    const deleted = await Promise.all(
      [0, 1].map(() => round((batchSize) => purgeInbox(db, retainMs!, batchSize), 10)),
    );
    expect(deleted[0]! + deleted[1]!).toBe(95);
    expect(await inboxRows()).toBe(15);
    expect(await inboxRows(sql`event_id like 'old-%'`)).toBe(0);
  });

  it("keeps everything while one of the streams keeps messages without an age limit", async () => {
    const jsm = await jetstreamManager(ctx.nc);
    const streams = [streamName(ctx.topology, "CHAIN"), streamName(ctx.topology, "AGENT_AUTH")];
    expect(await inboxRetentionMs(jsm, streams, 0)).toBeUndefined();
  });
});

describe("purge indexes", () => {
  /** The plan Postgres picks for `query` when reading a whole table is not an option it prefers. */
  const planOf = (query: ReturnType<typeof sql>) =>
    db.connection().execute(async (c) => {
      await sql`set enable_seqscan = off`.execute(c);
      try {
        return JSON.stringify((await sql`explain (format json) ${query}`.execute(c)).rows);
      } finally {
        await sql`reset enable_seqscan`.execute(c);
      }
    });

  it("finds the rows a purge deletes by index: inbox rows by application time, outbox rows by publication time", async () => {
    expect(
      await planOf(
        sql`select consumer, event_id from inbox where processed_at < now() - interval '1 hour' limit 10`,
      ),
    ).toContain('"Index Name":"inbox_processed_at"');
    expect(
      await planOf(sql`select seq from outbox where published_at < now() - interval '1 hour' limit 10`),
    ).toContain('"Index Name":"outbox_published_at"');
  });
});
