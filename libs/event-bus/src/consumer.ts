import { isDatabaseUnavailable } from "@humanpass/db";
import {
  assertValidEvent,
  type CloudEvent,
  InvalidEventError,
  type StreamName,
  streamName,
  subjectOf,
  type Topology,
} from "@humanpass/events";
import { microBatcher } from "@humanpass/micro-batch";
import { backoffDelay, sleep } from "@humanpass/retry";
import { type ConsumerMessages, type JetStreamManager, type JsMsg, jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { createNoopMeter, type Meter } from "@opentelemetry/api";
import { type Kysely, sql, type Transaction } from "kysely";
import type { Logger } from "pino";
import { ensureDeadLetterStream, publishDeadLetter } from "./dead-letters.ts";
import { DEFAULT_ACK_WAIT_MS } from "./durables.ts";
import { ensureDurable } from "./topology.ts";
import { contextFrom, inSpan, linkTo, SpanKind } from "./tracing.ts";

export interface DeliveryInfo {
  subject: string;
  /** 1 on the first try; one more after each failure of the handler. Database outages do not count. */
  attempt: number;
}

export type EventHandler = (
  event: CloudEvent<any>,
  trx: Transaction<any>,
  delivery: DeliveryInfo,
) => Promise<void>;

/** Applies every new event of one delivered batch at once (e.g. one multi-row insert); all or nothing. */
export type BatchEventHandler = (events: CloudEvent<any>[], trx: Transaction<any>) => Promise<void>;

export type ConsumerOptions = ConsumerBaseOptions &
  ({ handler: EventHandler } | { batchHandler: BatchEventHandler });

interface ConsumerBaseOptions {
  db: Kysely<any>;
  nats: NatsConnection;
  topology: Topology;
  /**
   * `stream`, `durable`, `type` and `ackWaitMs` are a service's `DurableSpec` (durables.ts): the durable the topology
   * step created for it.
   */
  stream: StreamName;
  durable: string;
  /** One event type, or the whole stream. */
  type?: string;
  logger: Logger;
  /** Failed attempts before a message goes to the dead-letter stream; database outages are not attempts. */
  maxAttempts?: number;
  batchSize?: number;
  /**
   * Apply this durable's batches one at a time across every replica (a transaction-level advisory lock on the
   * durable's name). Replicas share a durable, so two of them hold batches at once; a handler whose effect
   * depends on rows another event writes (a revocation and its attestation) needs the other's commit to be seen.
   */
  exclusive?: boolean;
  ackWaitMs?: number;
  /** Delay before redelivery after a failed attempt `attempt` (1-based). */
  backoffMs?: (attempt: number) => number;
  /** Delay before the `n`th (0-based) retry of a batch while the database does not answer. */
  unavailableBackoffMs?: (n: number) => number;
  /** Where the consumer's series go (`humanpass_consumer_*`, labelled with the durable's name); none without. */
  meter?: Meter;
}

export interface ConsumerStats {
  applied: number;
  duplicates: number;
  /** Handler failures that will be retried. */
  retried: number;
  /** Messages sent to the dead-letter stream. */
  deadLettered: number;
  /** Waits for a database that did not answer. */
  unavailable: number;
  /** CloudEvents `time` (ms since the epoch) of the last event applied; undefined until one is. */
  lastAppliedEventTime?: number;
}

export interface RunningConsumer {
  readonly stats: ConsumerStats;
  /** The stream (full name) and durable it reads: what observeJetStream reports the server's view of. */
  readonly stream: string;
  readonly durable: string;
  stop(): Promise<void>;
}

/**
 * How long each of a consumer's pull requests lasts (nats.js's `expires`; its idle heartbeat is half of that). A
 * pull left on a node that lost the consumer's leadership is never answered: the client pulls again when the pull
 * expires or two heartbeats are missed. At nats.js's default of 30 s a consumer could wait more than half a minute
 * after a NATS node loss; below 5 s the wait is mostly the consumer's own leader election (`npm run bench --
 * nats-failover`, docs/performance-decisions.md). An idle consumer's cost is one pull request per period.
 */
export const CONSUME_EXPIRES_MS = 5_000;

const defaultBackoff = (attempt: number) => backoffDelay({ attempt, baseMs: 250, maxMs: 30_000 });
const defaultUnavailableBackoff = (n: number) => backoffDelay({ attempt: n + 1, baseMs: 100, maxMs: 5_000 });

/** Buckets (seconds) for event time → applied: sub-second when flowing, minutes when catching up. */
const LAG_BUCKETS_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

function consumerInstruments(meter: Meter) {
  return {
    applied: meter.createCounter("humanpass_consumer_events_applied_total", {
      description: "Events applied (duplicates excluded), by consumer and event type",
    }),
    duplicates: meter.createCounter("humanpass_consumer_duplicates_total", {
      description: "Events found in the inbox already (delivered again after they were applied)",
    }),
    lag: meter.createHistogram("humanpass_consumer_apply_lag_seconds", {
      description: "Event time to its application's commit",
      unit: "s",
      advice: { explicitBucketBoundaries: LAG_BUCKETS_SECONDS },
    }),
    redeliveries: meter.createCounter("humanpass_consumer_redeliveries_total", {
      description: "Messages JetStream delivered more than once",
    }),
    deadLetters: meter.createCounter("humanpass_consumer_dead_letters_total", {
      description: "Messages sent to the dead-letter stream",
    }),
    databaseWaits: meter.createCounter("humanpass_consumer_database_waits_total", {
      description: "Batches held because the database did not answer",
    }),
  };
}

/**
 * Applies events exactly once to the service's state: each event id is inserted into the inbox in the same
 * transaction as the handler's effects, and the message is acked only after that commit. Messages are applied
 * in batches (one transaction) and one by one when a batch fails, so a poison message cannot hold the others back.
 *
 * A database that does not answer (refused, lost, timed out) is not the message's fault: the batch waits with
 * back-off and is tried again until the database answers, and the wait counts as no attempt. Only the handler's
 * own failures, and messages that are not valid events, count; after `maxAttempts` (at once for an invalid
 * message) the message goes to the dead-letter stream (`humanpass events dead-letters`), is logged at error level
 * and counted.
 */
export async function startConsumer(options: ConsumerOptions): Promise<RunningConsumer> {
  const { db, logger, durable } = options;
  const maxAttempts = options.maxAttempts ?? 5;
  const backoff = options.backoffMs ?? defaultBackoff;
  const unavailableBackoff = options.unavailableBackoffMs ?? defaultUnavailableBackoff;
  const batchSize = options.batchSize ?? 200;
  const ackWaitMs = options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
  const stats: ConsumerStats = { applied: 0, duplicates: 0, retried: 0, deadLettered: 0, unavailable: 0 };
  const instruments = consumerInstruments(options.meter ?? createNoopMeter());
  const labels = { consumer: durable };
  // At 0 from the start: an alert on their increase needs the series before the first one happens.
  for (const counter of [instruments.redeliveries, instruments.deadLetters, instruments.databaseWaits])
    counter.add(0, labels);

  const jsm = await jetstream(options.nats).jetstreamManager();
  await ensureDeadLetterStream(jsm, options.topology);
  await ensureDurable(jsm, options.topology, {
    stream: options.stream,
    durable,
    type: options.type,
    ackWaitMs,
  });
  const consumer = await jetstream(options.nats).consumers.get(
    streamName(options.topology, options.stream),
    durable,
  );
  const messages: ConsumerMessages = await consumer.consume({
    max_messages: batchSize * 2,
    expires: CONSUME_EXPIRES_MS,
  });

  type Parsed = { msg: JsMsg; event: CloudEvent };

  // Received and not yet acked, naked or terminated: kept from redelivery while they wait (a database outage can
  // outlast ack_wait), by telling the server we are still working on them.
  const inFlight = new Set<JsMsg>();
  const heartbeat = setInterval(
    () => {
      for (const msg of inFlight) msg.working();
    },
    Math.max(500, Math.floor(ackWaitMs / 3)),
  );
  heartbeat.unref();
  const settle = (msg: JsMsg, how: "ack" | "nak" | "term", delayMs?: number) => {
    inFlight.delete(msg);
    failures.delete(msg.seq);
    if (how === "ack") msg.ack();
    else if (how === "nak") msg.nak(delayMs);
    // NATS 2.9 does not read `+TERM <reason>` as a termination (the message comes back after ack_wait, to be
    // dead-lettered again): plain `+TERM`; the reason is in the log line and the dead letter.
    else msg.term();
  };
  // Handler failures per stream sequence. In memory: a restart starts the count again, never past maxAttempts.
  const failures = new Map<number, number>();

  let stopping = false;
  const stopped = new AbortController();

  async function deadLetter(msg: JsMsg, error: string, attempts: number, eventId?: string): Promise<void> {
    const payload = msg.string();
    let event: unknown;
    try {
      event = JSON.parse(payload);
    } catch {
      event = undefined;
    }
    const where = { consumer: durable, subject: msg.subject, seq: msg.seq, eventId, attempts };
    try {
      await publishDeadLetter(options.nats, options.topology, {
        consumer: durable,
        stream: options.stream,
        subject: msg.subject,
        streamSeq: msg.seq,
        attempts,
        error,
        deadLetteredAt: new Date().toISOString(),
        payload,
        ...(event === undefined ? {} : { event }),
      });
    } catch (e) {
      logger.warn(
        { ...where, err: (e as Error).message },
        "could not store a dead letter; the event will be delivered again",
      );
      failures.set(msg.seq, attempts - 1);
      inFlight.delete(msg);
      msg.nak(backoff(attempts));
      return;
    }
    stats.deadLettered++;
    instruments.deadLetters.add(1, labels);
    logger.error({ ...where, err: error }, "event dead-lettered: it will not be applied unless replayed");
    settle(msg, "term");
  }

  async function parse(msg: JsMsg): Promise<Parsed | undefined> {
    try {
      const event = msg.json<unknown>();
      // The source must be the stream owner's (assertValidEvent), and the subject the one its type is published on.
      assertValidEvent(options.stream, event);
      const expected = subjectOf(options.topology, options.stream, event.type);
      if (msg.subject !== expected)
        throw new InvalidEventError(`${event.type} event on subject ${msg.subject}, not ${expected}`);
      return { msg, event };
    } catch (e) {
      await deadLetter(msg, `invalid event: ${(e as Error).message}`, 1);
      return undefined;
    }
  }

  async function apply(batch: Parsed[]): Promise<void> {
    let applied: Parsed[] = [];
    await db.transaction().execute(async (trx) => {
      if (options.exclusive)
        await sql`select pg_advisory_xact_lock(hashtext(${`humanpass:consumer:${durable}`}))`.execute(trx);
      // The ids as one array parameter: a VALUES row per event built a statement of twice as many parameters,
      // which Kysely assembled and Postgres parsed and planned anew for every batch size.
      const { rows } = await sql<{ event_id: string }>`
        insert into inbox (consumer, event_id)
        select ${durable}, unnest(${batch.map(({ event }) => event.id)}::text[])
        on conflict (consumer, event_id) do nothing
        returning event_id`.execute(trx);
      const fresh = new Set(rows.map((r) => r.event_id));
      const todo = batch.filter(({ event }) => fresh.delete(event.id)); // an id twice in one batch counts once
      if ("batchHandler" in options) {
        if (todo.length > 0) {
          // Parented to the first message's trace, linked to every message's (the first included): each
          // producer's trace shows the batch that applied its event.
          await inSpan(
            `process ${todo[0].msg.subject} (${todo.length})`,
            {
              parent: contextFrom(headersOf(todo[0].msg)),
              links: todo.flatMap((p) => linkTo(headersOf(p.msg))),
              kind: SpanKind.CONSUMER,
              attributes: { "messaging.system": "nats", "messaging.batch.message_count": todo.length },
            },
            () =>
              options.batchHandler(
                todo.map((p) => p.event),
                trx,
              ),
          );
        }
        applied = todo;
        return;
      }
      for (const { msg, event } of todo) {
        await inSpan(
          `process ${msg.subject}`,
          {
            parent: contextFrom(headersOf(msg)),
            kind: SpanKind.CONSUMER,
            attributes: {
              "messaging.system": "nats",
              "messaging.destination.name": msg.subject,
              "messaging.message.id": event.id,
            },
          },
          () =>
            options.handler(event, trx, { subject: msg.subject, attempt: (failures.get(msg.seq) ?? 0) + 1 }),
        );
        applied.push({ msg, event });
      }
    });
    stats.applied += applied.length;
    stats.duplicates += batch.length - applied.length;
    const now = Date.now();
    for (const { event } of applied) {
      instruments.applied.add(1, { ...labels, event_type: event.type });
      const time = Date.parse(event.time ?? "");
      if (Number.isFinite(time)) {
        instruments.lag.record(Math.max(0, now - time) / 1000, labels);
        stats.lastAppliedEventTime = time;
      }
    }
    if (batch.length > applied.length) instruments.duplicates.add(batch.length - applied.length, labels);
    for (const { msg } of batch) settle(msg, "ack");
  }

  async function processBatch(batch: Parsed[]): Promise<void> {
    for (let waits = 0; ; waits++) {
      try {
        await apply(batch);
        if (waits > 0) logger.info({ consumer: durable, waits }, "database answers again; events applied");
        return;
      } catch (e) {
        if (!isDatabaseUnavailable(e)) return handlerFailed(batch, e as Error);
        if (stopping) {
          for (const { msg } of batch) settle(msg, "nak");
          return;
        }
        stats.unavailable++;
        instruments.databaseWaits.add(1, labels);
        const delay = unavailableBackoff(waits);
        logger.warn(
          { consumer: durable, held: batch.length, retryInMs: delay, err: (e as Error).message },
          "database unavailable: events held and retried, not counted as attempts",
        );
        await sleep(delay, stopped.signal);
      }
    }
  }

  async function handlerFailed(batch: Parsed[], error: Error): Promise<void> {
    if (batch.length > 1) {
      for (const one of batch) await processBatch([one]);
      return;
    }
    const [{ msg, event }] = batch;
    const attempt = (failures.get(msg.seq) ?? 0) + 1;
    if (attempt >= maxAttempts) {
      await deadLetter(msg, error.message, attempt, event.id);
      return;
    }
    failures.set(msg.seq, attempt);
    stats.retried++;
    const delay = backoff(attempt);
    logger.warn(
      {
        consumer: durable,
        subject: msg.subject,
        eventId: event.id,
        attempt,
        retryInMs: delay,
        err: error.message,
      },
      "event handler failed; will retry",
    );
    inFlight.delete(msg);
    msg.nak(delay);
  }

  let chain = Promise.resolve();
  const received = microBatcher<JsMsg>((taken) => {
    chain = chain
      .then(async () => {
        for (let i = 0; i < taken.length; i += batchSize) {
          const parsed: Parsed[] = [];
          for (const msg of taken.slice(i, i + batchSize)) {
            const p = await parse(msg);
            if (p) parsed.push(p);
          }
          if (parsed.length > 0) await processBatch(parsed);
        }
      })
      .catch((e) => {
        // Whatever this batch left unacknowledged is delivered again after ack_wait.
        for (const msg of taken) inFlight.delete(msg);
        logger.error({ consumer: durable, err: (e as Error).message }, "event consumer failed on a batch");
      });
  });

  const pump = (async () => {
    for await (const msg of messages) {
      if (msg.redelivered) instruments.redeliveries.add(1, labels);
      inFlight.add(msg);
      received.add(msg);
    }
  })().catch((e) => {
    if (!stopping)
      logger.error({ consumer: durable, err: (e as Error).message }, "event consumer stopped receiving");
  });

  return {
    stats,
    stream: streamName(options.topology, options.stream),
    durable,
    async stop() {
      stopping = true;
      stopped.abort();
      await messages.close().catch(() => {});
      await pump;
      received.flush();
      await chain;
      clearInterval(heartbeat);
    },
  };
}

function headersOf(msg: JsMsg): Record<string, string> | undefined {
  if (!msg.headers) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of msg.headers) out[k.toLowerCase()] = v[0];
  return out;
}

/**
 * Deletes up to `batchSize` inbox rows applied more than `olderThanMs` ago, in one statement; returns how many.
 * Rows another replica's purge holds are skipped (SKIP LOCKED), so replicas running it at once never wait on
 * each other nor delete a row twice.
 */
export async function purgeInbox(db: Kysely<any>, olderThanMs: number, batchSize = 5_000): Promise<number> {
  const result = await sql`
    delete from inbox where (consumer, event_id) in (
      select consumer, event_id from inbox
      where processed_at < now() - make_interval(secs => ${olderThanMs / 1000})
      limit ${batchSize} for update skip locked)`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * How long inbox rows must be kept: the longest `max_age` of `streams` plus `marginMs`, or undefined when one of
 * them keeps messages without an age limit (then no row may go). An event can be delivered again only while its
 * message is in its stream, and it was stored before it was applied, so a row older than that is for a message
 * the stream has removed; the margin covers a redelivery (a replayed dead letter, an outbox row published again
 * after the duplicate window) still queued behind a lagging consumer. Read from the streams at each purge, so a
 * retention changed by the topology step applies without a restart.
 */
export async function inboxRetentionMs(
  jsm: JetStreamManager,
  streams: string[],
  marginMs: number,
): Promise<number | undefined> {
  let longest = 0;
  for (const name of streams) {
    const maxAgeNs = (await jsm.streams.info(name)).config.max_age;
    if (!maxAgeNs) return undefined;
    longest = Math.max(longest, maxAgeNs / 1_000_000);
  }
  return longest + marginMs;
}
