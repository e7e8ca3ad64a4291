import { jetstream } from "@nats-io/jetstream";
import { type NatsConnection, headers as natsHeaders } from "@nats-io/transport-node";
import { type Kysely, type Migration, sql, type Transaction } from "kysely";
import pg from "pg";
import type { Logger } from "pino";
import type { StreamName } from "./catalog";
import { type CloudEvent, createCloudEvent } from "./envelope";
import { subjectOf, type Topology } from "./topology";
import { captureTraceContext, contextFrom, injectInto, inSpan, SpanKind } from "./tracing";

/** Outbox and inbox tables, created inside the service's schema by its own migrations. */
export const outboxMigration: Migration = {
  async up(db) {
    await db.schema
      .createTable("outbox")
      .ifNotExists()
      .addColumn("seq", "bigserial", (c) => c.primaryKey())
      .addColumn("id", "uuid", (c) => c.notNull().unique())
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("event", "jsonb", (c) => c.notNull())
      .addColumn("trace", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn("published_at", "timestamptz")
      .execute();
    await db.schema
      .createIndex("outbox_pending")
      .ifNotExists()
      .on("outbox")
      .column("seq")
      .where(sql.ref("published_at"), "is", null)
      .execute();
    // One NOTIFY per inserting statement, at commit, wakes the relays: producers pay no extra round trip.
    await sql`
      create or replace function outbox_notify() returns trigger language plpgsql as $$
      begin
        perform pg_notify('outbox_' || tg_table_schema, '');
        return null;
      end $$`.execute(db);
    await sql`
      create trigger outbox_notify after insert on outbox
      for each statement execute function outbox_notify()`.execute(db);
    await db.schema
      .createTable("inbox")
      .ifNotExists()
      .addColumn("consumer", "text", (c) => c.notNull())
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("processed_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .addPrimaryKeyConstraint("inbox_pkey", ["consumer", "event_id"])
      .execute();
  },
};

export interface OutboxTables {
  outbox: {
    seq: string;
    id: string;
    subject: string;
    event: CloudEvent;
    trace: Record<string, string>;
    created_at: Date;
    published_at: Date | null;
  };
  inbox: { event_id: string; consumer: string; processed_at: Date };
}

export interface OutboxEvent<D = unknown> {
  stream: StreamName;
  source: string;
  type: string;
  data: D;
  subject?: string;
}

export function notifyChannel(schema: string): string {
  return `outbox_${schema}`;
}

export interface OutboxRow {
  id: string;
  subject: string;
  event: CloudEvent;
  trace: Record<string, string>;
}

/**
 * The outbox rows of `events`, with the trace context active now: what `enqueue` inserts, for a producer whose
 * own statement inserts them together with its state change.
 */
export function outboxRows(topology: Topology, events: OutboxEvent[]): OutboxRow[] {
  const trace = captureTraceContext();
  return events.map((e) => {
    const event = createCloudEvent({ source: e.source, type: e.type, data: e.data, subject: e.subject });
    return { id: event.id, subject: subjectOf(topology, e.stream, e.type), event, trace };
  });
}

/**
 * Writes events to the outbox inside the caller's transaction, so they exist exactly when the state change does.
 * The trace context active now travels with them. Returns the CloudEvents written.
 */
export async function enqueue(
  trx: Transaction<any> | Kysely<any>,
  topology: Topology,
  events: OutboxEvent | OutboxEvent[],
): Promise<CloudEvent[]> {
  const list = Array.isArray(events) ? events : [events];
  if (list.length === 0) return [];
  const rows = outboxRows(topology, list);
  await trx
    .insertInto("outbox")
    .values(
      rows.map((r) => ({
        id: r.id,
        subject: r.subject,
        event: JSON.stringify(r.event),
        trace: JSON.stringify(r.trace),
      })),
    )
    .execute();
  return rows.map((r) => r.event);
}

export interface OutboxRelayOptions {
  db: Kysely<any>;
  nats: NatsConnection;
  schema: string;
  logger: Logger;
  /** For LISTEN; polling alone is used when absent. */
  connectionString?: string;
  batchSize?: number;
  pollIntervalMs?: number;
  publishTimeoutMs?: number;
  maxBackoffMs?: number;
  /** How long published rows are kept for inspection before they are deleted. */
  retainPublishedMs?: number;
  /**
   * After a partial batch, how long to let further commits land before claiming again. Every commit notifies;
   * without this pause a busy producer of small transactions costs one claim-and-mark transaction per commit
   * (and as many that find nothing), more database work than the producer's own.
   */
  gatherMs?: number;
}

export interface OutboxRelay {
  stop(): Promise<void>;
  readonly stats: { published: number; failures: number };
}

/**
 * Publishes outbox rows to JetStream. Rows are claimed with FOR UPDATE SKIP LOCKED, so replicas share the work;
 * a row is marked only after its PubAck, and Nats-Msg-Id lets JetStream drop the copy a crash in between resends.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { db, nats, schema, logger } = options;
  const batchSize = options.batchSize ?? 500;
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  const maxBackoffMs = options.maxBackoffMs ?? 10_000;
  const retainMs = options.retainPublishedMs ?? 3_600_000;
  const gatherMs = options.gatherMs ?? 2;
  const js = jetstream(nats, { timeout: options.publishTimeoutMs ?? 5_000 });
  const stats = { published: 0, failures: 0 };
  let running = true;
  let wake: (() => void) | undefined;
  let notified = false;
  let listener: pg.Client | undefined;
  let lastPurge = 0;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  async function listen(): Promise<void> {
    if (!options.connectionString || !running) return;
    const client = new pg.Client({ connectionString: options.connectionString });
    client.on("notification", () => {
      notified = true;
      wake?.();
    });
    client.on("error", (e) => {
      logger.warn({ err: e.message }, "outbox LISTEN connection lost; polling until it is back");
      listener = undefined;
      client.end().catch(() => {});
      setTimeout(() => listen().catch(() => {}), pollIntervalMs);
    });
    try {
      await client.connect();
      await client.query(`listen "${notifyChannel(schema)}"`);
      listener = client;
      if (!running) await client.end();
    } catch (e) {
      logger.warn({ err: (e as Error).message }, "outbox LISTEN failed; polling");
      await client.end().catch(() => {});
      if (running) setTimeout(() => listen().catch(() => {}), pollIntervalMs);
    }
  }

  async function publishBatch(): Promise<number> {
    return db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom("outbox")
        // The event as Postgres prints it: parsing the jsonb only to stringify it again cost more than publishing.
        .select(["seq", "id", "subject", sql<string>`event::text`.as("event"), "trace"])
        .where("published_at", "is", null)
        .orderBy("seq")
        .limit(batchSize)
        .forUpdate()
        .skipLocked()
        .execute();
      if (rows.length === 0) return 0;
      await Promise.all(
        rows.map((row) =>
          inSpan(
            `publish ${row.subject}`,
            {
              parent: contextFrom(row.trace),
              kind: SpanKind.PRODUCER,
              attributes: {
                "messaging.system": "nats",
                "messaging.destination.name": row.subject,
                "messaging.message.id": row.id,
              },
            },
            async (_span, ctx) => {
              const h = natsHeaders();
              for (const [k, v] of Object.entries(injectInto(ctx))) h.set(k, v);
              await js.publish(row.subject, row.event, { msgID: row.id, headers: h });
            },
          ),
        ),
      );
      await trx
        .updateTable("outbox")
        .set({ published_at: sql`now()` })
        .where(
          "seq",
          "in",
          rows.map((r) => r.seq),
        )
        .execute();
      return rows.length;
    });
  }

  async function purge(): Promise<void> {
    if (Date.now() - lastPurge < 60_000) return;
    lastPurge = Date.now();
    await db
      .deleteFrom("outbox")
      .where("published_at", "<", new Date(Date.now() - retainMs))
      .execute();
  }

  const loop = (async () => {
    await listen();
    let backoff = 100;
    while (running) {
      try {
        notified = false;
        const n = await publishBatch();
        stats.published += n;
        backoff = 100;
        if (n < batchSize) {
          await purge();
          if (running && !notified) await sleep(pollIntervalMs);
          if (running && gatherMs > 0) await new Promise((r) => setTimeout(r, gatherMs));
        }
      } catch (e) {
        stats.failures++;
        logger.warn(
          { err: (e as Error).message, retryInMs: backoff },
          "outbox relay could not publish; will retry",
        );
        if (running) await sleep(backoff + Math.floor(Math.random() * backoff * 0.2));
        backoff = Math.min(backoff * 2, maxBackoffMs);
      }
    }
  })();

  return {
    stats,
    async stop() {
      running = false;
      wake?.();
      await loop;
      await listener?.end().catch(() => {});
    },
  };
}
