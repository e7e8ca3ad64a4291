import { STREAMS, type StreamName, streamName, streamSubjects, type Topology } from "@humanpass/events";
import { sleep } from "@humanpass/retry";
import {
  type ConsumerConfig,
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
import { type DurableSpec, durableConfig, durableDifferences } from "./durables.ts";
import {
  SERVICE_GRANTS,
  SERVICES_API_PREFIX,
  type SubscriberGrant,
  sourceDeliverPrefix,
  subscriberApiPrefix,
} from "./permissions.ts";
import { DEFAULT_RETENTION, type Retention } from "./retention.ts";

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
 * An existing stream, or a service's durable on it, whose configuration is not the topology's, and how
 * (`max_bytes: 1024 → -1`).
 */
export interface StreamDrift {
  stream: string;
  /** Set when it is this durable of the stream that differs. */
  durable?: string;
  changes: string[];
}

/** How a drift names what differs: `CHAIN`, or `CHAIN consumer webhooks-chain`. */
export const driftName = (drift: StreamDrift) =>
  drift.durable ? `${drift.stream} consumer ${drift.durable}` : drift.stream;

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
 * Creates every missing stream and the dead-letter stream, replicas and retention (DEFAULT_RETENTION unless given),
 * then every service's durables (`applyServiceDurables`): what the migrations step runs with the `topology` NATS
 * user, the only one allowed to create streams (services only wait for their streams, `waitForStreams`). An
 * existing stream or durable that differs goes to `onDrift`, and is changed only with `update` (by `operator`: the
 * topology user may not update a stream). Returns the streams' names, then `<stream>/<durable>` for each durable.
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
  const durables = await applyServiceDurables(jsm, topology, mode);
  return [...streams.map((s) => streamName(topology, s)), deadLetterStreamName(topology), ...durables];
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

/**
 * Creates the durable pull consumer of `spec` (`durableConfig`), or updates an existing one's ack wait and
 * pending limit; idempotent. What `startConsumer` runs at a service's start: where the topology step created the
 * durable first (every deployment) this is an update of a pull consumer, which the server never turns into a push one.
 */
export async function ensureDurable(
  jsm: JetStreamManager,
  topology: Topology,
  spec: DurableSpec,
): Promise<void> {
  const stream = streamName(topology, spec.stream);
  const config = durableConfig(topology, spec);
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

/**
 * Creates every service's durables (`SERVICE_GRANTS`) as pull consumers before the services start: a service user
 * may create its own durable's name with any payload (permissions cannot read it), so a durable it found missing
 * it could create as a push consumer delivering into another service's subjects; one that exists stays a pull
 * consumer. An existing durable that differs goes to `onDrift`, and is changed only with `update` (as `operator`):
 * updated in place, or deleted and created again where the server cannot update it (a push one, another deliver
 * policy), which starts it again from the stream's first message (the services' inboxes drop what they applied).
 */
export async function applyServiceDurables(
  jsm: JetStreamManager,
  topology: Topology,
  mode: { update?: boolean; onDrift?: (drift: StreamDrift) => void } = {},
): Promise<string[]> {
  const applied: string[] = [];
  for (const spec of SERVICE_GRANTS.flatMap((g) => g.durables)) {
    const stream = streamName(topology, spec.stream);
    const config = durableConfig(topology, spec);
    applied.push(`${stream}/${spec.durable}`);
    let existing: Partial<ConsumerConfig>;
    try {
      existing = (await jsm.consumers.info(stream, spec.durable)).config;
    } catch (e) {
      if (!isNotFound(e)) throw e;
      await jsm.consumers.add(stream, config).catch((err) => {
        // Another topology run, or the service itself, created it between our info and add.
        if (!String(err).includes("already in use") && !String(err).includes("already exists")) throw err;
      });
      continue;
    }
    const changes = durableDifferences(existing, topology, spec);
    if (changes.length === 0) continue;
    if (mode.update) {
      const inPlace =
        !existing.deliver_subject &&
        existing.deliver_policy === config.deliver_policy &&
        existing.ack_policy === config.ack_policy;
      if (inPlace) await jsm.consumers.update(stream, spec.durable, config);
      else {
        await jsm.consumers.delete(stream, spec.durable);
        await jsm.consumers.add(stream, config);
      }
    }
    mode.onDrift?.({ stream, durable: spec.durable, changes });
  }
  return applied;
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
