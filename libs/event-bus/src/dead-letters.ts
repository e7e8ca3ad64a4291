import { STREAMS, type StreamName, streamName, type Topology } from "@humanpass/events";
import {
  DeliverPolicy,
  DiscardPolicy,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { StreamLimits } from "./retention.ts";

/**
 * What a consumer could not apply and will not retry: the message as it arrived, why it failed and after how many
 * attempts. One stream for all consumers; the subject names the consumer (`dead_letters.<durable>`).
 */
export interface DeadLetter {
  consumer: string;
  stream: StreamName;
  /** The subject the event arrived on; a replay publishes it there again. */
  subject: string;
  /** Its sequence in the event stream. */
  streamSeq: number;
  attempts: number;
  error: string;
  deadLetteredAt: string;
  /** The message body as received (UTF-8). */
  payload: string;
  /** The body parsed as JSON, when it is JSON. */
  event?: unknown;
}

export interface StoredDeadLetter extends DeadLetter {
  /** Its sequence in the dead-letter stream: what `replayDeadLetter` takes. */
  seq: number;
}

export function deadLetterStreamName(topology: Topology): string {
  return topology.prefix ? `${topology.prefix.toUpperCase()}_DEAD_LETTERS` : "DEAD_LETTERS";
}

export function deadLetterSubject(topology: Topology, consumer: string): string {
  const base = `dead_letters.${consumer}`;
  return topology.prefix ? `${topology.prefix}.${base}` : base;
}

/** The dead-letter stream as the topology step applies it (`applyTopology`): replicas and retention included. */
export function deadLetterStreamConfig(
  topology: Topology,
  options: { replicas?: number; limits?: StreamLimits } = {},
) {
  return {
    name: deadLetterStreamName(topology),
    subjects: [deadLetterSubject(topology, ">")],
    description: "events a consumer could not apply; `humanpass events dead-letters` lists and replays them",
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    // Full, it drops its oldest dead letters: each was alerted on when it came (HumanpassDeadLetter) and its event
    // stays replayable from its own stream; refusing new ones would leave a poison message redelivered forever.
    discard: DiscardPolicy.Old,
    num_replicas: options.replicas ?? 1,
    max_age: (options.limits?.maxAgeMs ?? 0) * 1_000_000,
    max_bytes: options.limits?.maxBytes ?? -1,
  };
}

/**
 * Creates the dead-letter stream when missing, never changing an existing one: a consumer's start calls it, for
 * tests and servers without the topology step; where the topology step ran, it finds the stream and leaves it as the
 * topology configured it.
 */
export async function ensureDeadLetterStream(jsm: JetStreamManager, topology: Topology): Promise<void> {
  const config = deadLetterStreamConfig(topology);
  try {
    await jsm.streams.info(config.name);
  } catch {
    await jsm.streams.add(config).catch((e) => {
      if (!String(e).includes("already in use")) throw e;
    });
  }
}

export async function publishDeadLetter(
  nc: NatsConnection,
  topology: Topology,
  letter: DeadLetter,
): Promise<void> {
  await jetstream(nc).publish(deadLetterSubject(topology, letter.consumer), JSON.stringify(letter), {
    expect: { streamName: deadLetterStreamName(topology) },
  });
}

/** Every dead letter still stored, oldest first; only `consumer`'s when given. */
export async function listDeadLetters(
  nc: NatsConnection,
  topology: Topology,
  options: { consumer?: string } = {},
): Promise<StoredDeadLetter[]> {
  const jsm = await jetstreamManager(nc);
  const stream = deadLetterStreamName(topology);
  let info: Awaited<ReturnType<typeof jsm.streams.info>>;
  try {
    info = await jsm.streams.info(stream);
  } catch {
    return [];
  }
  if (info.state.messages === 0) return [];
  // An ordered consumer: ephemeral, no acks, removed by the server once idle.
  const consumer = await jetstream(nc).consumers.get(stream, {
    deliver_policy: DeliverPolicy.All,
    filter_subjects: deadLetterSubject(topology, options.consumer ?? ">"),
  });
  const out: StoredDeadLetter[] = [];
  for (let pending = info.state.messages; pending > 0; ) {
    const batch = await consumer.fetch({ max_messages: Math.min(pending, 500), expires: 1_000 });
    let received = 0;
    for await (const msg of batch) {
      received++;
      pending = msg.info.pending;
      out.push({ ...msg.json<DeadLetter>(), seq: msg.seq });
    }
    if (received === 0) break;
  }
  return out;
}

export class ForgedDeadLetterError extends Error {
  override name = "ForgedDeadLetterError";
}

/**
 * Publishes a dead letter's message to its subject again, then removes the dead letter. Every consumer of that
 * subject receives it; those that had applied it skip it through their inbox.
 *
 * Only what the owning stream holds is republished: the dead letter names the stream and sequence the message
 * was delivered from, that message is read back from the stream (STREAM.MSG.GET) and must be the dead-lettered
 * one, subject and bytes. A dead letter that names no such message (written by hand, or by a service for an
 * event its stream never carried) is refused with a ForgedDeadLetterError and kept, for a person to look at.
 */
export async function replayDeadLetter(
  nc: NatsConnection,
  topology: Topology,
  letter: StoredDeadLetter,
): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const refuse = (why: string) =>
    new ForgedDeadLetterError(`dead letter #${letter.seq} not replayed: ${why}`);
  if (typeof letter.stream !== "string" || !(letter.stream in STREAMS))
    throw refuse(`it names no humanpass stream (${JSON.stringify(letter.stream)})`);
  if (!Number.isSafeInteger(letter.streamSeq) || letter.streamSeq < 1)
    throw refuse(`it names no stream sequence (${JSON.stringify(letter.streamSeq)})`);
  const stream = streamName(topology, letter.stream);
  const original = await jsm.streams.getMessage(stream, { seq: letter.streamSeq }).catch((e: Error) => {
    if (/not found|no message/i.test(e.message)) return null;
    throw e;
  });
  if (!original)
    throw refuse(
      `stream ${stream} holds no message ${letter.streamSeq} (forged, or removed by the stream's limits)`,
    );
  if (original.subject !== letter.subject || original.string() !== letter.payload)
    throw refuse(
      `message ${letter.streamSeq} of stream ${stream} is not the dead-lettered one (subject ${original.subject}): the dead letter was forged or altered`,
    );
  await jetstream(nc).publish(original.subject, original.data, { expect: { streamName: stream } });
  await jsm.streams.deleteMessage(deadLetterStreamName(topology), letter.seq, false);
}
