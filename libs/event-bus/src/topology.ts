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
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { accessOptions, type NatsAccess } from "./connection.ts";
import { deadLetterStreamConfig, deadLetterStreamName } from "./dead-letters.ts";
import {
  SERVICES_API_PREFIX,
  type SubscriberGrant,
  sourceDeliverPrefix,
  subscriberApiPrefix,
} from "./permissions.ts";
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

/** An existing stream whose configuration is not the topology's, and how (`max_bytes: 1024 → -1`). */
export interface StreamDrift {
  stream: string;
  changes: string[];
}

export interface TopologyOptions extends StreamsOptions {
  /**
   * Change existing streams to the topology's configuration (`humanpass nats topology --update --confirm`, as
   * `operator`). Without it existing streams are left as they are: the topology user creates streams and may not
   * update one, whose payload (a lower limit, another subject) no permission can check.
   */
  update?: boolean;
  /** Each existing stream that differs from the topology, updated or not. */
  onDrift?: (drift: StreamDrift) => void;
  /** Subscribers whose copies of their streams are created in their accounts (never updated). */
  subscribers?: SubscriberGrant[];
}

/**
 * Creates the streams, and updates existing ones to exactly this configuration (replicas and retention included)
 * unless `update: false`: tests that create their own streams, and `applyTopology`. Services never call it: they
 * wait for their streams (`waitForStreams`), so a service start cannot undo an operator's retention or replicas.
 */
export async function ensureStreams(
  jsm: JetStreamManager,
  topology: Topology,
  streams: StreamName[],
  options: StreamsOptions & Pick<TopologyOptions, "update" | "onDrift"> = {},
): Promise<void> {
  for (const stream of streams)
    await createOrUpdate(jsm, streamConfig(topology, stream, options), {
      update: options.update ?? true,
      onDrift: options.onDrift,
    });
}

function streamConfig(topology: Topology, stream: StreamName, options: StreamsOptions): StreamSettings {
  const limits = options.retention?.[stream];
  return {
    name: streamName(topology, stream),
    subjects: [streamSubjects(topology, stream)],
    description: STREAMS[stream].description,
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    // Every event stream has durables that must see every event (attestations-api's read model, webhooks'
    // deliveries): at its size limit a stream refuses new events rather than dropping unread old ones. The
    // relay's publish then fails, the outbox keeps the rows (HumanpassOutboxStale fires) and publishing resumes
    // once room is made (docs/architecture.md, "Full streams"; libs/event-bus/test/full-stream.test.ts).
    discard: DiscardPolicy.New,
    num_replicas: options.replicas ?? 1,
    duplicate_window: (options.duplicateWindowMs ?? 120_000) * 1_000_000,
    max_age: (limits?.maxAgeMs ?? 0) * 1_000_000,
    max_bytes: limits?.maxBytes ?? -1,
  };
}

/**
 * A subscriber's copy of `stream` in its own account: no subjects of its own, sourced from HUMANPASS's stream
 * through the imports of its account (the deliver subject HUMANPASS exports to it alone), same retention.
 */
export function subscriberStreamConfig(
  topology: Topology,
  subscriber: string,
  stream: StreamName,
  options: StreamsOptions = {},
): StreamSettings {
  const { subjects: _none, duplicate_window: _unused, ...config } = streamConfig(topology, stream, options);
  return {
    ...config,
    description: `${STREAMS[stream].description} (sourced from ${config.name})`,
    sources: [
      {
        name: config.name,
        external: { api: SERVICES_API_PREFIX, deliver: sourceDeliverPrefix(subscriber, config.name) },
      },
    ],
  };
}

type StreamSettings = Partial<StreamConfig> & { name: string };

/** What `config` sets that `existing` has otherwise, one `field: old → new` each. */
function streamDifferences(existing: StreamConfig, config: StreamSettings): string[] {
  return Object.entries(config)
    .filter(([key, value]) => JSON.stringify(existing[key as keyof StreamConfig]) !== JSON.stringify(value))
    .map(
      ([key, value]) =>
        `${key}: ${JSON.stringify(existing[key as keyof StreamConfig])} → ${JSON.stringify(value)}`,
    );
}

async function createOrUpdate(
  jsm: JetStreamManager,
  config: StreamSettings,
  mode: { update: boolean; onDrift?: (drift: StreamDrift) => void } = { update: true },
) {
  try {
    const { config: existing } = await jsm.streams.info(config.name);
    const changes = streamDifferences(existing, config);
    if (changes.length === 0) return;
    if (mode.update) await jsm.streams.update(config.name, config);
    mode.onDrift?.({ stream: config.name, changes });
  } catch (e) {
    if (!isNotFound(e)) throw e;
    await jsm.streams.add(config).catch(async (err) => {
      // Another topology run created it between our info and add.
      if (!String(err).includes("already in use")) throw err;
    });
  }
}

/**
 * Creates every missing stream and the dead-letter stream, replicas and retention (DEFAULT_RETENTION unless given):
 * what the migrations step runs with the `topology` NATS user, the only one allowed to (services only wait for their
 * streams, `waitForStreams`). An existing stream that differs goes to `onDrift`, and is changed only with `update`
 * (by `operator`: the topology user may not update a stream).
 */
export async function applyTopology(
  jsm: JetStreamManager,
  topology: Topology,
  options: TopologyOptions = {},
): Promise<string[]> {
  const streams = Object.keys(STREAMS) as StreamName[];
  const retention = { ...DEFAULT_RETENTION, ...options.retention };
  const mode = { update: options.update ?? false, onDrift: options.onDrift };
  await ensureStreams(jsm, topology, streams, { ...options, ...mode, retention });
  await createOrUpdate(
    jsm,
    deadLetterStreamConfig(topology, { replicas: options.replicas, limits: retention.DEAD_LETTERS }),
    mode,
  );
  return [...streams.map((s) => streamName(topology, s)), deadLetterStreamName(topology)];
}

/**
 * Creates each subscriber's missing copies in its account, through the imports of its stream API (so the
 * `topology` user needs no user in that account); an existing copy is left alone, the subscriber may not change it.
 */
export async function applySubscriberStreams(
  nc: NatsConnection,
  topology: Topology,
  subscribers: SubscriberGrant[],
  options: StreamsOptions = {},
): Promise<string[]> {
  const retention = { ...DEFAULT_RETENTION, ...options.retention };
  const created: string[] = [];
  for (const grant of subscribers) {
    const jsm = await jetstreamManager(nc, { apiPrefix: subscriberApiPrefix(grant.name), checkAPI: false });
    for (const stream of grant.streams) {
      const config = subscriberStreamConfig(topology, grant.name, stream, { ...options, retention });
      await createOrUpdate(jsm, config, { update: false });
      created.push(`${grant.name}:${config.name}`);
    }
  }
  return created;
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
 * Connects as the topology user (or none, on a server without authentication), applies the topology (and the
 * subscribers' copies) and closes: the migrations step, `make up` and `npx humanpass nats topology`.
 */
export async function applyTopologyAt(
  servers: string,
  topology: Topology,
  options: NatsAccess & TopologyOptions = {},
): Promise<string[]> {
  const nc = await connect({
    servers: servers.split(","),
    name: "humanpass-topology",
    ...accessOptions(options),
  });
  try {
    const { user: _user, pass: _pass, tlsCaFile: _tlsCaFile, subscribers = [], ...apply } = options;
    const streams = await applyTopology(await jetstreamManager(nc), topology, apply);
    const copies = await applySubscriberStreams(nc, topology, subscribers, apply);
    return [...streams, ...copies];
  } finally {
    await nc.close();
  }
}
