import type { ContractMigration } from "@humanpass/db";
import {
  type CloudEvent,
  createCloudEvent,
  type StreamName,
  subjectOf,
  type Topology,
} from "@humanpass/events";
import { backoffDelay, sleep } from "@humanpass/retry";
import { type NatsConnection, headers as natsHeaders } from "@nats-io/transport-node";
import { createNoopMeter, type Meter } from "@opentelemetry/api";
import { CompiledQuery, type Kysely, type Migration, sql, type Transaction } from "kysely";
import pg from "pg";
import type { Logger } from "pino";
import { JetStreamBatchPublisher } from "./jetstream-publisher.ts";
import {
  captureTraceContext,
  contextFrom,
  injectInto,
  SpanStatusCode,
  startProducerSpan,
} from "./tracing.ts";

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
    // Disabled by `disableOutboxNotifyMigration`; kept as it ran, so that databases migrate through the same steps.
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

/**
 * The indexes the scheduled purges find their rows by: published outbox rows by publication time, inbox rows by
 * application time. Without them each purge round reads the whole table, and the inbox keeps a stream's whole
 * `max_age` of rows. An index build holds writes to its table for its duration: on a large inbox, run the release
 * that brings it at a quiet hour. Services whose inbox went (`dropInboxMigration`) get the outbox index alone.
 */
export const purgeIndexesMigration: Migration = {
  async up(db) {
    await db.schema
      .createIndex("outbox_published_at")
      .ifNotExists()
      .on("outbox")
      .column("published_at")
      .where(sql.ref("published_at"), "is not", null)
      .execute();
    const { rows } = await sql<{ inbox: string | null }>`select to_regclass('inbox')::text as inbox`.execute(
      db,
    );
    if (rows[0]?.inbox) {
      await db.schema
        .createIndex("inbox_processed_at")
        .ifNotExists()
        .on("inbox")
        .column("processed_at")
        .execute();
    }
  },
};

/**
 * For a service whose consumers all went: its inbox (from `outboxMigration`) is no longer written. agent-auth and
 * payment-gateway had only their cache-invalidation durables; each replica now follows revocations with plain
 * subscriptions that keep no state in the database (`followChainInvalidations`).
 */
export const dropInboxMigration: ContractMigration = {
  contract: { removes: ["inbox"], unusedSince: "0.1.0" },
  async up(db) {
    await sql`drop table if exists inbox`.execute(db);
  },
};

/**
 * The outbox's NOTIFY trigger stops firing: before PostgreSQL 19 every NOTIFY signals every backend listening in the
 * database, whatever its channel, and notifying commits serialize on one cluster-wide lock, so its cost grew with
 * the number of relays (replicas × services) sharing the database. A producer now wakes its own process's relay
 * (`OutboxRelay.wake`) once its transaction commits; relays find other processes' rows by their poll. Disabled, not
 * dropped: the drop is a contract step for a later release (expand → contract). A previous release rolled back to,
 * or still running during a rollout, listens in vain and finds the rows by its poll (1 s).
 */
export const disableOutboxNotifyMigration: Migration = {
  async up(db) {
    await sql`alter table outbox disable trigger outbox_notify`.execute(db);
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
  await writeOutboxRows(trx, rows);
  return rows.map((r) => r.event);
}

// Up to this many rows go as a VALUES list, one parameter per column; more as one jsonb array. Postgres parses and
// plans a short VALUES list for less than it spends taking the jsonb array apart (docs/performance-decisions.md).
const VALUES_ROWS = 50;

/**
 * Inserts `rows` (of `outboxRows`, which fixed each one's trace context) in their order, in one statement: for a
 * producer that gathers rows made at different moments, e.g. several requests' events in one commit.
 */
export async function writeOutboxRows(trx: Transaction<any> | Kysely<any>, rows: OutboxRow[]): Promise<void> {
  if (rows.length === 0) return;
  if (rows.length > VALUES_ROWS) {
    await trx.executeQuery(CompiledQuery.raw(outboxInsert("$1::jsonb"), [JSON.stringify(rows)]));
    return;
  }
  const values: unknown[] = [];
  const tuples = rows.map((r) => {
    const n = values.push(r.id, r.subject, JSON.stringify(r.event), JSON.stringify(r.trace));
    return `($${n - 3}::uuid, $${n - 2}, $${n - 1}::jsonb, $${n}::jsonb)`;
  });
  await trx.executeQuery(
    CompiledQuery.raw(`insert into outbox (id, subject, event, trace) values ${tuples.join(", ")}`, values),
  );
}

/**
 * The statement `enqueue` inserts outbox rows with: the rows of the jsonb array `rows` (SQL text, a parameter
 * such as `$1::jsonb`, of `outboxRows`), in their order, where the SQL boolean `condition` holds. For a producer
 * whose own statement writes its events with its state change (as a data-modifying CTE), one round trip.
 */
export function outboxInsert(rows: string, condition = "true"): string {
  return `insert into outbox (id, subject, event, trace)
    select r.id, r.subject, r.event, r.trace
    from rows from (jsonb_to_recordset(${rows})
      as (id uuid, subject text, event jsonb, trace jsonb)) with ordinality as r(id, subject, event, trace, n)
    where ${condition}
    order by r.n`;
}

export interface OutboxRelayOptions {
  nats: NatsConnection;
  schema: string;
  logger: Logger;
  /** The relay's own connection: it claims and marks rows on it. */
  connectionString: string;
  batchSize?: number;
  /**
   * How often the relay looks for rows nobody woke it for (default 1000): rows another process committed and its
   * own relay has not published (that process stopped, or its relay is behind). Its own process's rows come with a
   * `wake`.
   */
  pollIntervalMs?: number;
  publishTimeoutMs?: number;
  /** How long a claim or mark may take before the relay gives its connection up and opens another. */
  queryTimeoutMs?: number;
  maxBackoffMs?: number;
  /**
   * After a partial batch, how long to let further commits land before claiming again (default 10). Every commit
   * wakes the relay; without this pause a producer of small transactions costs a relay cycle (claim and mark: two
   * round trips to Postgres, one to JetStream) per commit, more CPU than the producer's own work, taken from the
   * requests its process serves. Each event waits at most this long more.
   */
  gatherMs?: number;
  /** Where the relay's series go (`humanpass_outbox_publish_*`); none without. */
  meter?: Meter;
}

export interface OutboxRelay {
  /** Rows were committed in this process: publish them now, not at the next poll. Cheap; call after each commit. */
  wake(): void;
  stop(): Promise<void>;
  readonly stats: { published: number; failures: number };
}

type ClaimedRow = { seq: string; id: string; subject: string; event: string; trace: Record<string, string> };

/**
 * Publishes outbox rows to JetStream. A batch is one transaction on the relay's own connection: its first
 * statement marks the oldest unpublished rows published and returns them (FOR UPDATE SKIP LOCKED: replicas share
 * the work), the rows are published, and only after every PubAck does the transaction commit; a failed publish
 * rolls the mark back. Nats-Msg-Id lets JetStream drop the copy a crash before the commit resends. Two round
 * trips to Postgres per batch (`begin` + mark, `commit`), each one simple-protocol query.
 *
 * The relay's commits do not wait for the WAL flush (`synchronous_commit = off`): a mark lost to a Postgres crash
 * only publishes its rows again, which JetStream's duplicate window and the consumers' inboxes absorb. The
 * producers' own commits, which hold the events, stay synchronous.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { nats, schema, logger, connectionString } = options;
  const batchSize = Math.floor(options.batchSize ?? 500);
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  const maxBackoffMs = options.maxBackoffMs ?? 10_000;
  const gatherMs = options.gatherMs ?? 10;
  const publisher = new JetStreamBatchPublisher(nats, options.publishTimeoutMs ?? 5_000);
  const outbox = `${pg.escapeIdentifier(schema)}.outbox`;
  // The event as Postgres prints it: parsing the jsonb only to stringify it again cost more than publishing.
  const claim =
    `begin; update ${outbox} o set published_at = now() from (select seq from ${outbox} ` +
    `where published_at is null order by seq limit ${batchSize} for update skip locked) c where o.seq = c.seq ` +
    "returning o.seq, o.id, o.subject, o.event::text as event, o.trace";
  const stats = { published: 0, failures: 0 };
  const meter = options.meter ?? createNoopMeter();
  const publishDuration = meter.createHistogram("humanpass_outbox_publish_duration_seconds", {
    description: "One relay batch: publish to JetStream until every PubAck",
    unit: "s",
  });
  const published = meter.createCounter("humanpass_outbox_published_events_total", {
    description: "Outbox rows this relay published",
  });
  const failures = meter.createCounter("humanpass_outbox_publish_failures_total", {
    description: "Relay batches that failed and are retried",
  });
  failures.add(0);
  published.add(0);
  let running = true;
  // Aborted by stop(), and by a wake unless the relay is backing off a failure: with NATS or Postgres away, every
  // commit would otherwise start another attempt at once.
  let wakeUp: AbortController | undefined;
  let backingOff = false;
  let woken = false;
  let client: pg.Client | undefined;

  async function wait(ms: number, afterFailure = false): Promise<void> {
    wakeUp = new AbortController();
    backingOff = afterFailure;
    await sleep(ms, wakeUp.signal);
    wakeUp = undefined;
    backingOff = false;
  }

  async function connection(): Promise<pg.Client> {
    if (client) return client;
    const fresh = new pg.Client({
      connectionString,
      application_name: `outbox-relay ${schema}`,
      keepAlive: true,
      // A connection that stopped answering (no FIN, no RST) would otherwise hold the relay for the kernel's
      // retransmission timeout, a quarter of an hour.
      query_timeout: options.queryTimeoutMs ?? 30_000,
      options: "-c synchronous_commit=off",
    });
    fresh.on("error", (e) => {
      logger.warn({ err: e.message }, "outbox relay lost its database connection; reconnecting");
      if (client === fresh) client = undefined;
      fresh.end().catch(() => {});
    });
    try {
      await fresh.connect();
    } catch (e) {
      await fresh.end().catch(() => {});
      throw e;
    }
    client = fresh;
    return fresh;
  }

  async function publishBatch(): Promise<number> {
    const db = await connection();
    try {
      const [, claimed] = (await db.query(claim)) as unknown as [pg.QueryResult, pg.QueryResult<ClaimedRow>];
      // RETURNING follows no order: publish in the outbox's.
      const rows = claimed.rows.sort((a, b) => Number(BigInt(a.seq) - BigInt(b.seq)));
      if (rows.length === 0) {
        // Nothing waits on this commit: the next query on the connection queues behind it.
        db.query("commit").catch(() => {});
        return 0;
      }
      await publish(rows);
      await db.query("commit");
      return rows.length;
    } catch (e) {
      await db.query("rollback").catch(() => {
        if (client === db) client = undefined;
        db.end().catch(() => {});
      });
      throw e;
    }
  }

  async function publish(rows: ClaimedRow[]): Promise<void> {
    const spans = rows.map((row) =>
      startProducerSpan(`publish ${row.subject}`, contextFrom(row.trace), {
        "messaging.system": "nats",
        "messaging.destination.name": row.subject,
        "messaging.message.id": row.id,
      }),
    );
    const messages = rows.map((row, i) => {
      const headers = natsHeaders();
      headers.set("Nats-Msg-Id", row.id);
      for (const [k, v] of Object.entries(injectInto(spans[i]!.ctx))) headers.set(k, v);
      return { subject: row.subject, data: row.event, headers };
    });
    const started = performance.now();
    try {
      await publisher.publish(messages);
      publishDuration.record((performance.now() - started) / 1000);
    } catch (e) {
      for (const { span } of spans) {
        span.recordException(e as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error).message });
      }
      throw e;
    } finally {
      for (const { span } of spans) span.end();
    }
  }

  const loop = (async () => {
    let failed = 0;
    while (running) {
      try {
        woken = false;
        const n = await publishBatch();
        stats.published += n;
        if (n > 0) published.add(n);
        failed = 0;
        if (n < batchSize) {
          if (running && !woken) await wait(pollIntervalMs);
          if (running && gatherMs > 0) await sleep(gatherMs);
        }
      } catch (e) {
        stats.failures++;
        failures.add(1);
        const retryInMs = backoffDelay({
          attempt: ++failed,
          baseMs: 100,
          maxMs: maxBackoffMs,
          jitter: [1, 1.2],
        });
        logger.warn({ err: (e as Error).message, retryInMs }, "outbox relay could not publish; will retry");
        if (running) await wait(retryInMs, true);
      }
    }
  })();

  return {
    stats,
    wake() {
      woken = true;
      if (!backingOff) wakeUp?.abort();
    },
    async stop() {
      running = false;
      wakeUp?.abort();
      await loop;
      publisher.close();
      await client?.end().catch(() => {});
    },
  };
}

/**
 * Deletes up to `batchSize` published outbox rows older than `olderThanMs`, oldest first, in one statement; returns
 * how many. SKIP LOCKED: replicas purging at once never wait on each other, and the rows a relay is claiming
 * (unpublished ones) are never candidates.
 */
export async function purgeOutbox(db: Kysely<any>, olderThanMs: number, batchSize = 5_000): Promise<number> {
  const result = await sql`
    delete from outbox where seq in (
      select seq from outbox
      where published_at < now() - make_interval(secs => ${olderThanMs / 1000})
      order by seq limit ${batchSize} for update skip locked)`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * `humanpass_outbox_pending_events` and `humanpass_outbox_oldest_pending_age_seconds`, read from the table when
 * metrics are collected (the partial index on unpublished rows keeps it cheap). Reads through the service's pool:
 * every replica reports the same backlog, the one they share.
 */
export function observeOutbox(meter: Meter, db: Kysely<any>): void {
  const pending = meter.createObservableGauge("humanpass_outbox_pending_events", {
    description: "Outbox rows not yet published",
  });
  const oldest = meter.createObservableGauge("humanpass_outbox_oldest_pending_age_seconds", {
    description: "Age of the oldest unpublished outbox row (0 when none)",
    unit: "s",
  });
  meter.addBatchObservableCallback(
    async (result) => {
      const { rows } = await sql<{ n: string; age: number | null }>`
        select count(*) as n, extract(epoch from now() - min(created_at))::float8 as age
        from outbox where published_at is null`.execute(db);
      result.observe(pending, Number(rows[0]?.n ?? 0));
      result.observe(oldest, Math.max(0, rows[0]?.age ?? 0));
    },
    [pending, oldest],
  );
}
