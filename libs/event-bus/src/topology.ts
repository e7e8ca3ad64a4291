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
  DiscardPolicy,
  type JetStreamManager,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { accessOptions, type NatsAccess } from "./connection.ts";
import { deadLetterStreamConfig, deadLetterStreamName } from "./dead-letters.ts";
import { DEFAULT_RETENTION, type Retention } from "./retention.ts";
import { sleep } from "./sleep.ts";

/** Deletes every stream of a prefixed topology: what a benchmark or test run created for itself. */
export async function deletePrefixedStreams(jsm: JetStreamManager, topology: Topology): Promise<void> {
  if (!topology.prefix) throw new Error("only a prefixed topology's streams can be deleted");
  const prefix = `${topology.prefix.toUpperCase()}_`;
  for await (const s of jsm.streams.list()) {
    if (s.config.name.startsWith(prefix)) await jsm.streams.delete(s.config.name);
  }
}

export interface StreamsOptions {
  duplicateWindowMs?: number;
  replicas?: number;
  /** Per stream; a stream not named keeps everything (no age or size limit). */
  retention?: Partial<Retention>;
}

/**
 * Creates or updates the streams with exactly this configuration (replicas and retention included): what the
 * topology step runs, and tests that create their own streams. Services never call it: they wait for their
 * streams (`waitForStreams`), so a service start cannot undo an operator's retention or replicas.
 */
export async function ensureStreams(
  jsm: JetStreamManager,
  topology: Topology,
  streams: StreamName[],
  options: StreamsOptions = {},
): Promise<void> {
  for (const stream of streams) {
    const limits = options.retention?.[stream];
    await createOrUpdate(jsm, {
      name: streamName(topology, stream),
      subjects: [streamSubjects(topology, stream)],
      description: STREAMS[stream].description,
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      num_replicas: options.replicas ?? 1,
      duplicate_window: (options.duplicateWindowMs ?? 120_000) * 1_000_000,
      max_age: (limits?.maxAgeMs ?? 0) * 1_000_000,
      max_bytes: limits?.maxBytes ?? -1,
    });
  }
}

async function createOrUpdate(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }) {
  try {
    await jsm.streams.info(config.name);
    await jsm.streams.update(config.name, config);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    await jsm.streams.add(config).catch(async (err) => {
      // Another topology run created it between our info and add.
      if (!String(err).includes("already in use")) throw err;
    });
  }
}

/**
 * Creates or updates every stream and the dead-letter stream, replicas and retention (DEFAULT_RETENTION unless
 * given): what the migrations step runs with the `topology` NATS user, the only one allowed to (services only wait
 * for their streams, `waitForStreams`). Running it again applies changed settings to existing streams.
 */
export async function applyTopology(
  jsm: JetStreamManager,
  topology: Topology,
  options: StreamsOptions = {},
): Promise<string[]> {
  const streams = Object.keys(STREAMS) as StreamName[];
  const retention = { ...DEFAULT_RETENTION, ...options.retention };
  await ensureStreams(jsm, topology, streams, { ...options, retention });
  await createOrUpdate(
    jsm,
    deadLetterStreamConfig(topology, { replicas: options.replicas, limits: retention.DEAD_LETTERS }),
  );
  return [...streams.map((s) => streamName(topology, s)), deadLetterStreamName(topology)];
}

export class StreamsMissingError extends Error {
  override name = "StreamsMissingError";
}

/**
 * Waits until the named streams exist (STREAM.INFO, all a service may call on them), up to `timeoutMs`: a service
 * started before the topology step waits for it instead of creating streams it may not create.
 */
export async function waitForStreams(
  jsm: JetStreamManager,
  names: string[],
  options: { logger: Logger; timeoutMs?: number; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let missing = names;
  for (let round = 0; ; round++) {
    const found = await Promise.all(
      missing.map((name) =>
        jsm.streams.info(name).then(
          () => true,
          (e) => {
            if (isNotFound(e)) return false;
            throw e;
          },
        ),
      ),
    );
    missing = missing.filter((_, i) => !found[i]);
    if (missing.length === 0) return;
    if (Date.now() >= deadline)
      throw new StreamsMissingError(
        `JetStream streams ${missing.join(", ")} do not exist: apply the topology first (\`npx humanpass nats topology\`, run by the migrations step)`,
      );
    if (round === 0)
      options.logger.warn(
        { missing },
        "waiting for JetStream streams: the topology step (migrations) creates them",
      );
    await sleep(options.intervalMs ?? 1_000);
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

/**
 * Connects as the topology user (or none, on a server without authentication), applies the topology and closes:
 * the migrations step, `make up` and `npx humanpass nats topology`.
 */
export async function applyTopologyAt(
  servers: string,
  topology: Topology,
  options: NatsAccess & { replicas?: number; retention?: Partial<Retention> } = {},
): Promise<string[]> {
  const nc = await connect({
    servers: servers.split(","),
    name: "humanpass-topology",
    ...accessOptions(options),
  });
  try {
    return await applyTopology(await jetstreamManager(nc), topology, {
      replicas: options.replicas,
      retention: options.retention,
    });
  } finally {
    await nc.close();
  }
}
