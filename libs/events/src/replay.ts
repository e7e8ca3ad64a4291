import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import type { EventType, Payloads, StreamName } from "./catalog.ts";
import { assertValidEvent, type CloudEvent } from "./envelope.ts";
import { DEFAULT_TOPOLOGY, streamName, streamSubjects, subjectOf, type Topology } from "./subjects.ts";

export interface ReplayOptions<S extends StreamName, T extends EventType<S>> {
  stream: S;
  type?: T;
  /** The first event replayed is the first stored at or after this time. */
  since: Date;
  /** The replay's consumers are named `<namePrefix>_<n>`; with a subscriber account, use the account's prefix. */
  namePrefix: string;
  topology?: Topology;
  handler: (event: CloudEvent<NoInfer<Payloads[S][T]>>) => Promise<void>;
}

/**
 * Hands every stored event since `since` to `handler`, in stream order, and resolves with their count once it has
 * reached the last event stored when it started. Nothing is acked and no durable is left behind: an ordered
 * consumer of its own, which the server removes once idle. Events that fail validation are skipped.
 */
export async function replaySince<S extends StreamName, T extends EventType<S> = EventType<S>>(
  nc: NatsConnection,
  options: ReplayOptions<S, T>,
): Promise<number> {
  const topology = options.topology ?? DEFAULT_TOPOLOGY;
  const stream = streamName(topology, options.stream);
  const filter = options.type
    ? subjectOf(topology, options.stream, options.type)
    : streamSubjects(topology, options.stream);
  const jsm = await jetstreamManager(nc);
  const last = (await jsm.streams.info(stream)).state.last_seq;
  const consumer = await jetstream(nc).consumers.get(stream, {
    name_prefix: options.namePrefix,
    filter_subjects: filter,
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: options.since.toISOString(),
  });
  let count = 0;
  try {
    if ((await consumer.info()).num_pending === 0) return 0;
    const messages = await consumer.consume();
    for await (const msg of messages) {
      const event = parseOrUndefined(msg.string());
      if (isValid(options.stream, event)) {
        await options.handler(event as never);
        count++;
      }
      if (msg.seq >= last || msg.info.pending === 0) break;
    }
    return count;
  } finally {
    await consumer.delete().catch(() => {});
  }
}

function isValid(stream: StreamName, event: unknown): boolean {
  try {
    assertValidEvent(stream, event);
    return true;
  } catch {
    return false;
  }
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
