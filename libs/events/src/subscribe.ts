import {
  AckPolicy,
  type ConsumerMessages,
  DeliverPolicy,
  type JetStreamManager,
  type JsMsg,
  jetstream,
  jetstreamManager,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import type { EventType, Payloads, StreamName } from "./catalog.ts";
import { assertValidEvent, type CloudEvent } from "./envelope.ts";
import { DEFAULT_TOPOLOGY, streamName, streamSubjects, subjectOf, type Topology } from "./subjects.ts";

/** Where a message came from and how often it has been delivered (1 on the first delivery). */
export interface Delivery {
  subject: string;
  streamSequence: number;
  attempt: number;
}

/** An event the subscriber gave up on: as received, why, after how many deliveries. */
export interface SubscriberDeadLetter {
  durable: string;
  stream: StreamName;
  subject: string;
  streamSequence: number;
  attempts: number;
  error: string;
  deadLetteredAt: string;
  /** The message body as received (UTF-8); a replay publishes nothing, the subscriber decides what to do. */
  payload: string;
}

export interface SubscribeOptions<S extends StreamName, T extends EventType<S>> {
  stream: S;
  /** One event type of the stream; every type when omitted. */
  type?: T;
  /** The durable consumer's name; with a subscriber account, it must start with the account's prefix. */
  durable: string;
  /** Subjects and streams of a prefixed topology (`EVENTS_PREFIX`); none in production. */
  topology?: Topology;
  /**
   * Runs once per delivery; the message is acked only when it resolves. Deliveries are at least once: record
   * `event.id` in the same transaction as the effect and skip an id already recorded.
   */
  handler: (event: CloudEvent<NoInfer<Payloads[S][T]>>, delivery: Delivery) => Promise<void>;
  /** Deliveries before an event is dead-lettered (default 5). */
  maxDeliveries?: number;
  /** Wait before the n-th redelivery, the last entry repeating (default 1 s, 5 s, 30 s, 2 min). */
  backoffMs?: number[];
  /** How long the server waits for the ack before it delivers again (default 30 s). */
  ackWaitMs?: number;
  /** Where events the handler keeps refusing (or that fail validation) go: a subject captured by a stream the
   * subscriber may publish to (published with JetStream, so it is stored before the event is dropped), or a
   * callback; when omitted they are logged through `onError` and dropped. */
  deadLetter?: { subject: string } | ((letter: SubscriberDeadLetter) => Promise<void>);
  /** A new durable starts at this time; without it, at the first stored event. An existing durable resumes. */
  startAt?: Date;
  /** Errors of the handler and of dead-lettering, for logs. */
  onError?: (error: Error, delivery: Delivery) => void;
}

export interface Subscription {
  /** Stops fetching, lets the event in hand finish, and resolves; unacked events are delivered again later. */
  stop(): Promise<void>;
  /** Resolves when the subscription ends (stop or a closed connection). */
  readonly closed: Promise<void>;
}

const DEFAULT_BACKOFF_MS = [1_000, 5_000, 30_000, 120_000];

/**
 * Follows one stream (or one event type of it) with a durable pull consumer: each event is validated against the
 * catalog, handed to `handler`, and acked after it resolves. A failure is retried with back-off up to
 * `maxDeliveries` deliveries, then dead-lettered. Works with any `@nats-io/transport-*` connection of yours.
 */
export async function subscribe<S extends StreamName, T extends EventType<S> = EventType<S>>(
  nc: NatsConnection,
  options: SubscribeOptions<S, T>,
): Promise<Subscription> {
  const topology = options.topology ?? DEFAULT_TOPOLOGY;
  const maxDeliveries = options.maxDeliveries ?? 5;
  const backoff = options.backoffMs ?? DEFAULT_BACKOFF_MS;
  const stream = streamName(topology, options.stream);
  const jsm = await jetstreamManager(nc);
  await ensureDurable(jsm, stream, {
    durable_name: options.durable,
    ack_policy: AckPolicy.Explicit,
    filter_subject: options.type
      ? subjectOf(topology, options.stream, options.type)
      : streamSubjects(topology, options.stream),
    ack_wait: (options.ackWaitMs ?? 30_000) * 1_000_000,
    // The subscriber bounds the deliveries itself so the last one can be dead-lettered, never dropped silently.
    max_deliver: -1,
    ...(options.startAt
      ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: options.startAt.toISOString() }
      : { deliver_policy: DeliverPolicy.All }),
  });
  const js = jetstream(nc);
  const consumer = await js.consumers.get(stream, options.durable);
  const messages: ConsumerMessages = await consumer.consume({ max_messages: 64 });

  const deadLetter = async (msg: JsMsg, error: string, delivery: Delivery) => {
    const letter: SubscriberDeadLetter = {
      durable: options.durable,
      stream: options.stream,
      subject: msg.subject,
      streamSequence: msg.seq,
      attempts: delivery.attempt,
      error,
      deadLetteredAt: new Date().toISOString(),
      payload: msg.string(),
    };
    const target = options.deadLetter;
    if (typeof target === "function") await target(letter);
    else if (target) await js.publish(target.subject, JSON.stringify(letter));
    else options.onError?.(new Error(`dropped after ${delivery.attempt} deliveries: ${error}`), delivery);
  };

  const handle = async (msg: JsMsg) => {
    const delivery: Delivery = {
      subject: msg.subject,
      streamSequence: msg.seq,
      attempt: msg.info.deliveryCount,
    };
    let event: CloudEvent;
    try {
      const parsed = msg.json<unknown>();
      assertValidEvent(options.stream, parsed);
      event = parsed;
    } catch (e) {
      return settleFailure(msg, `invalid event: ${(e as Error).message}`, delivery, true);
    }
    if (delivery.attempt > maxDeliveries) {
      // Delivered again after the handler ran out of time on its last try (a crash, an ack wait run out).
      return settleFailure(msg, "delivered more often than maxDeliveries", delivery, true);
    }
    try {
      await options.handler(event as never, delivery);
    } catch (e) {
      options.onError?.(e as Error, delivery);
      return settleFailure(msg, (e as Error).message, delivery, delivery.attempt >= maxDeliveries);
    }
    msg.ack();
  };

  const settleFailure = async (msg: JsMsg, error: string, delivery: Delivery, final: boolean) => {
    if (!final) {
      msg.nak(backoff[Math.min(delivery.attempt - 1, backoff.length - 1)]);
      return;
    }
    try {
      await deadLetter(msg, error, delivery);
      msg.term(error);
    } catch (e) {
      // Not stored: keep the event and try again later rather than lose it.
      options.onError?.(e as Error, delivery);
      msg.nak(backoff[backoff.length - 1]);
    }
  };

  const closed = (async () => {
    for await (const msg of messages) await handle(msg);
  })();

  return {
    closed,
    async stop() {
      messages.stop();
      await closed;
    },
  };
}

/** Creates the durable, or updates what may change on an existing one (its position is kept). */
async function ensureDurable(
  jsm: JetStreamManager,
  stream: string,
  config: Parameters<JetStreamManager["consumers"]["add"]>[1] & { durable_name: string },
): Promise<void> {
  try {
    await jsm.consumers.info(stream, config.durable_name);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    await jsm.consumers.add(stream, config);
    return;
  }
  await jsm.consumers.update(stream, config.durable_name, { ack_wait: config.ack_wait });
}

function isNotFound(e: unknown): boolean {
  return /not found/i.test(String((e as Error)?.message ?? e));
}
