import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import type { EventType, Payloads, StreamName } from "./catalog.ts";
import { assertValidEvent, type CloudEvent } from "./envelope.ts";
import { DEFAULT_TOPOLOGY, streamName, streamSubjects, subjectOf, type Topology } from "./subjects.ts";

export interface ReplayOptions<S extends StreamName, T extends EventType<S>> {
  stream: S;
  type?: T;
  /** The first event replayed is the first stored at or after this time. */
  since: Date;
  /**
   * The replay's consumer name: with a subscriber account, one of its consumer names (`<name>_replay` by default,
   * `npx humanpass nats subscriber`). One replay at a time per name: a consumer left by an earlier one is replaced.
   */
  consumer: string;
  topology?: Topology;
  handler: (event: CloudEvent<NoInfer<Payloads[S][T]>>) => Promise<void>;
}

/**
 * Hands every stored event since `since` to `handler`, in stream order, and resolves with their count once it has
 * reached the last event stored when it started. Nothing is acked and nothing is left behind: a named consumer
 * (not an ordered one, whose random names no subscriber permission can grant) without acks, deleted at the end and
 * removed by the server after a minute idle should this process stop first. Events that fail validation are skipped.
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
  await jsm.consumers.delete(stream, options.consumer).catch(() => {});
  await jsm.consumers.add(stream, {
    name: options.consumer,
    ack_policy: AckPolicy.None,
    filter_subject: filter,
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: options.since.toISOString(),
    inactive_threshold: 60_000_000_000,
    mem_storage: true,
  });
  const consumer = await jetstream(nc).consumers.get(stream, options.consumer);
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
