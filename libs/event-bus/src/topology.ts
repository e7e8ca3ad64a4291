import {
  STREAMS,
  type StreamName,
  streamName,
  streamSubjects,
  subjectOf,
  type Topology,
} from "@humanpass/events";
import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";

/** Deletes every stream of a prefixed topology: what a benchmark or test run created for itself. */
export async function deletePrefixedStreams(jsm: JetStreamManager, topology: Topology): Promise<void> {
  if (!topology.prefix) throw new Error("only a prefixed topology's streams can be deleted");
  const prefix = `${topology.prefix.toUpperCase()}_`;
  for await (const s of jsm.streams.list()) {
    if (s.config.name.startsWith(prefix)) await jsm.streams.delete(s.config.name);
  }
}

/** Creates or updates the streams; safe to call from every replica at every start. */
export async function ensureStreams(
  jsm: JetStreamManager,
  topology: Topology,
  streams: StreamName[],
  options: { duplicateWindowMs?: number; maxAgeMs?: number; replicas?: number } = {},
): Promise<void> {
  for (const stream of streams) {
    const config = {
      name: streamName(topology, stream),
      subjects: [streamSubjects(topology, stream)],
      description: STREAMS[stream].description,
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      num_replicas: options.replicas ?? 1,
      duplicate_window: (options.duplicateWindowMs ?? 120_000) * 1_000_000,
      max_age: (options.maxAgeMs ?? 0) * 1_000_000,
    };
    try {
      await jsm.streams.info(config.name);
      await jsm.streams.update(config.name, config);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      await jsm.streams.add(config).catch(async (err) => {
        // Another replica created it between our info and add.
        if (!String(err).includes("already in use")) throw err;
      });
    }
  }
}

export interface DurableSpec {
  stream: StreamName;
  durable: string;
  /** Event types to receive; all of the stream when omitted. One filter subject only, so NATS 2.9 works. */
  type?: string;
  ackWaitMs?: number;
}

/** Creates or updates a durable pull consumer; idempotent. */
export async function ensureDurable(
  jsm: JetStreamManager,
  topology: Topology,
  spec: DurableSpec,
): Promise<void> {
  const stream = streamName(topology, spec.stream);
  const config = {
    durable_name: spec.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: spec.type
      ? subjectOf(topology, spec.stream, spec.type)
      : streamSubjects(topology, spec.stream),
    ack_wait: (spec.ackWaitMs ?? 30_000) * 1_000_000,
    max_ack_pending: 10_000,
  };
  try {
    await jsm.consumers.info(stream, spec.durable);
    await jsm.consumers.update(stream, spec.durable, {
      ack_wait: config.ack_wait,
      max_ack_pending: config.max_ack_pending,
    });
  } catch (e) {
    if (!isNotFound(e)) throw e;
    await jsm.consumers.add(stream, config);
  }
}

function isNotFound(e: unknown): boolean {
  const message = String((e as Error)?.message ?? e);
  return message.includes("not found") || (e as { code?: string })?.code === "404";
}
