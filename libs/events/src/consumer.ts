import { type ConsumerMessages, type JsMsg, jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { type Kysely, sql, type Transaction } from "kysely";
import type { Logger } from "pino";
import type { StreamName } from "./catalog";
import { assertValidEvent, type CloudEvent } from "./envelope";
import { ensureDurable, streamName, type Topology } from "./topology";
import { contextFrom, inSpan, SpanKind } from "./tracing";

export interface DeliveryInfo {
  subject: string;
  /** 1 on first delivery; higher on redeliveries. */
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
  stream: StreamName;
  durable: string;
  /** One event type, or the whole stream. */
  type?: string;
  logger: Logger;
  /** Deliveries before a message is terminated as poison. */
  maxAttempts?: number;
  batchSize?: number;
  ackWaitMs?: number;
  /** Delay before redelivery after a failed attempt `attempt` (1-based). */
  backoffMs?: (attempt: number) => number;
}

export interface ConsumerStats {
  applied: number;
  duplicates: number;
  retried: number;
  terminated: number;
}

export interface RunningConsumer {
  readonly stats: ConsumerStats;
  stop(): Promise<void>;
}

const defaultBackoff = (attempt: number) => Math.min(250 * 2 ** (attempt - 1), 30_000);

/**
 * Applies events exactly once to the service's state: each event id is inserted into the inbox in the same
 * transaction as the handler's effects, and the message is acked only after that commit. Messages are applied
 * in batches (one transaction) and one by one when a batch fails, so a poison message cannot hold the others back.
 */
export async function startConsumer(options: ConsumerOptions): Promise<RunningConsumer> {
  const { db, logger, durable } = options;
  const maxAttempts = options.maxAttempts ?? 5;
  const backoff = options.backoffMs ?? defaultBackoff;
  const batchSize = options.batchSize ?? 200;
  const stats: ConsumerStats = { applied: 0, duplicates: 0, retried: 0, terminated: 0 };

  await ensureDurable(await jetstream(options.nats).jetstreamManager(), options.topology, {
    stream: options.stream,
    durable,
    type: options.type,
    ackWaitMs: options.ackWaitMs,
  });
  const consumer = await jetstream(options.nats).consumers.get(
    streamName(options.topology, options.stream),
    durable,
  );
  const messages: ConsumerMessages = await consumer.consume({ max_messages: batchSize * 2 });

  type Parsed = { msg: JsMsg; event: CloudEvent };

  function terminate(msg: JsMsg, reason: string, eventId?: string) {
    stats.terminated++;
    logger.error(
      {
        consumer: durable,
        subject: msg.subject,
        seq: msg.seq,
        eventId,
        attempts: msg.info.deliveryCount,
        reason,
      },
      "event terminated: it will not be delivered again",
    );
    msg.term(reason);
  }

  function parse(msg: JsMsg): Parsed | undefined {
    try {
      const event = msg.json<unknown>();
      assertValidEvent(options.stream, event);
      return { msg, event };
    } catch (e) {
      terminate(msg, `invalid event: ${(e as Error).message}`);
      return undefined;
    }
  }

  async function apply(batch: Parsed[]): Promise<void> {
    let applied = 0;
    await db.transaction().execute(async (trx) => {
      const fresh = new Set(
        (
          await trx
            .insertInto("inbox")
            .values(batch.map(({ event }) => ({ event_id: event.id, consumer: durable })))
            .onConflict((oc) => oc.columns(["consumer", "event_id"]).doNothing())
            .returning("event_id")
            .execute()
        ).map((r) => r.event_id as string),
      );
      const todo = batch.filter(({ event }) => fresh.delete(event.id)); // an id twice in one batch counts once
      if ("batchHandler" in options) {
        if (todo.length > 0) {
          await inSpan(
            `process ${todo[0].msg.subject} (${todo.length})`,
            {
              parent: contextFrom(headersOf(todo[0].msg)),
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
        applied = todo.length;
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
          () => options.handler(event, trx, { subject: msg.subject, attempt: msg.info.deliveryCount }),
        );
        applied++;
      }
    });
    stats.applied += applied;
    stats.duplicates += batch.length - applied;
    for (const { msg } of batch) msg.ack();
  }

  async function processBatch(batch: Parsed[]): Promise<void> {
    try {
      await apply(batch);
      return;
    } catch (e) {
      if (batch.length > 1) {
        for (const one of batch) await processBatch([one]);
        return;
      }
      const [{ msg, event }] = batch;
      const attempt = msg.info.deliveryCount;
      if (attempt >= maxAttempts) {
        terminate(msg, `handler failed ${attempt} times: ${(e as Error).message}`, event.id);
        return;
      }
      stats.retried++;
      const delay = backoff(attempt);
      logger.warn(
        {
          consumer: durable,
          subject: msg.subject,
          eventId: event.id,
          attempt,
          retryInMs: delay,
          err: (e as Error).message,
        },
        "event handler failed; will retry",
      );
      msg.nak(delay);
    }
  }

  let buffer: JsMsg[] = [];
  let chain = Promise.resolve();
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const taken = buffer;
    buffer = [];
    chain = chain.then(async () => {
      for (let i = 0; i < taken.length; i += batchSize) {
        const parsed = taken
          .slice(i, i + batchSize)
          .map(parse)
          .filter((p): p is Parsed => p !== undefined);
        if (parsed.length > 0) await processBatch(parsed);
      }
    });
  };

  let stopping = false;
  const pump = (async () => {
    for await (const msg of messages) {
      buffer.push(msg);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    }
  })().catch((e) => {
    if (!stopping)
      logger.error({ consumer: durable, err: (e as Error).message }, "event consumer stopped receiving");
  });

  return {
    stats,
    async stop() {
      stopping = true;
      await messages.close().catch(() => {});
      await pump;
      if (scheduled) flush();
      await chain;
    },
  };
}

function headersOf(msg: JsMsg): Record<string, string> | undefined {
  if (!msg.headers) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of msg.headers) out[k.toLowerCase()] = v[0];
  return out;
}

/** Deletes inbox rows older than the longest redelivery horizon we care about. */
export async function purgeInbox(db: Kysely<any>, olderThanMs: number): Promise<void> {
  await sql`delete from inbox where processed_at < now() - make_interval(secs => ${olderThanMs / 1000})`.execute(
    db,
  );
}
