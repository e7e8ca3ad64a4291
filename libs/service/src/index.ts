import { CommonEnv, loadConfig, refusePlaceholdersInProduction, splitList } from "@humanpass/config";
import { type Kysely, type Migration, observePool, type Pool, pingDb } from "@humanpass/db";
import {
  connectNats,
  jetstreamManager,
  type NatsConnection,
  observeJetStream,
  observeNats,
  observeOutbox,
  pingNats,
  type RunningConsumer,
  type StreamName,
  streamName,
  type Topology,
} from "@humanpass/event-bus";
import {
  type HttpApp,
  type HttpServerSettings,
  installGracefulShutdown,
  optionalCheck,
  type ReadinessCheck,
} from "@humanpass/http";
import {
  createLogger,
  createMetrics,
  type Logger,
  routeConsoleTo,
  type ServiceMetrics,
  startTelemetry,
} from "@humanpass/telemetry";
import { type Static, type TObject, Type } from "@sinclair/typebox";
import { prepareConnections } from "./connections.ts";
import { inboxPurgeJob, outboxPurgeJob, type PeriodicJob, startPeriodicJobs } from "./periodic-jobs.ts";

export { type Clock, systemClock } from "./clock.ts";
export { type Connections, type ConnectionsOptions, prepareConnections } from "./connections.ts";
export type { PeriodicJob } from "./periodic-jobs.ts";

export interface ServiceRuntime<C> {
  config: C;
  logger: Logger;
  db: Kysely<any>;
  /** The pg pool under `db`, for statements kysely cannot run (named prepared statements). */
  pool: Pool;
  nats: NatsConnection;
  topology: Topology;
  /** For the /readyz checks of the HTTP base. */
  readiness: Record<string, ReadinessCheck>;
  /** TRUST_PROXY and the HTTP timeouts, for the HTTP base. */
  http: HttpServerSettings;
  /** The service's instruments (pool, NATS and outbox series already in): for its app, consumers and workers. */
  metrics: ServiceMetrics;
  /**
   * Call once a statement or transaction that wrote outbox rows has committed: this process's relay publishes them
   * at once instead of at its next poll (`OutboxRelay.wake`). Does nothing in a service that does not publish.
   */
  outboxCommitted: () => void;
}

export interface ServiceDefinition<S extends TObject, C = Static<S>> {
  /** Service name: logs, traces, CloudEvents `source`. */
  name: string;
  /** The service's Postgres schema. */
  schema: string;
  migrations: Record<string, Migration>;
  /** Session settings of the service's pool (e.g. its statement timeout); migrations run without them. */
  dbSettings?(config: C & Static<typeof CommonEnvSchema>): Record<string, string>;
  /** The service's own env variables; the common ones (DATABASE_URL, NATS_URL, …) are added. */
  env: S;
  /**
   * Checks across settings the schema cannot express (throws `ConfigError`): run before anything connects, so a
   * refused combination stops the service at once with exit 78, as a bad value does.
   */
  checkConfig?(config: C & Static<typeof CommonEnvSchema>): void;
  /**
   * Streams this service publishes to or reads from; it waits for them at start, up
   * to NATS_STREAMS_WAIT_MS: the topology step of the migrations creates them, services may not.
   */
  streams: StreamName[];
  /** Whether the service writes events (runs an outbox relay). */
  publishes: boolean;
  /** Builds the app and starts consumers and background work; called once everything is connected. */
  start(runtime: ServiceRuntime<C & Static<typeof CommonEnvSchema>>): Promise<{
    app: HttpApp;
    port: number;
    host?: string;
    consumers?: RunningConsumer[];
    /** Extra work to stop before the pools close, in order. */
    stop?: Array<[string, () => Promise<unknown>]>;
    /** The service's own expiry purges, run with the outbox's and the inbox's every PURGE_INTERVAL_MS. */
    purges?: PeriodicJob[];
  }>;
}

/**
 * The variables libs/service reads for every service on top of CommonEnv (docs/deploy.md's "Every service" table is
 * generated from these and CommonEnv).
 */
export const ServiceRuntimeEnv = {
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(
    Type.String({
      description: "OTLP/HTTP endpoint of a collector, e.g. http://otel-collector:4318; unset: no export",
    }),
  ),
  LOG_PRETTY: Type.Boolean({
    default: false,
    description: "true or false; human-readable logs (make up), JSON otherwise",
  }),
  DB_POOL_MAX: Type.Integer({
    minimum: 1,
    default: 10,
    description: "an integer >= 1: Postgres connections per replica",
  }),
  SHUTDOWN_DRAIN_MS: Type.Integer({
    minimum: 0,
    default: 5_000,
    description:
      "an integer >= 0 (milliseconds): after SIGTERM, how long /readyz answers 503 while requests are still served, before the server closes (waiting for requests in flight) and consumers, NATS and the pool stop",
  }),
  METRICS_ENABLED: Type.Boolean({
    default: true,
    description: "true or false; false: no instruments, /metrics answers an empty body (docs/metrics.md)",
  }),
  DEPLOYMENT_ENVIRONMENT: Type.String({
    default: "development",
    description: "resource attribute deployment.environment of every span and series",
  }),
  SERVICE_VERSION: Type.String({
    default: "0.1.0",
    description: "resource attribute service.version of every span and series",
  }),
  OUTBOX_RETENTION_MS: Type.Integer({
    minimum: 0,
    default: 3_600_000,
    description:
      "an integer >= 0 (milliseconds): how long published outbox rows are kept before they are deleted",
  }),
  INBOX_RETENTION_MARGIN_MS: Type.Integer({
    minimum: 0,
    default: 86_400_000,
    description:
      'an integer >= 0 (milliseconds): inbox rows are kept for the longest max_age of the service\'s streams plus this (never deleted while a stream has no max_age); docs/deploy.md, "JetStream retention"',
  }),
  OUTBOX_GATHER_MS: Type.Integer({
    minimum: 0,
    maximum: 1_000,
    default: 10,
    description:
      'an integer from 0 to 1000 (milliseconds): once the outbox relay has published what it found, how long it lets further commits land before it looks again: fewer relay round trips, each event up to this much later (docs/performance-decisions.md, "payment-gateway")',
  }),
  PURGE_INTERVAL_MS: Type.Integer({
    minimum: 1_000,
    default: 60_000,
    description:
      "an integer >= 1000 (milliseconds): how often published outbox rows, expired inbox rows and the service's own expired rows (verifier sessions, payment-gateway proof nonces and reservations) are deleted",
  }),
  // Read by the OpenTelemetry SDK itself; declared so that the configuration docs list them.
  OTEL_TRACES_SAMPLER: Type.Optional(
    Type.String({
      description:
        "read by the OpenTelemetry SDK: always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio; unset: parentbased_always_on",
    }),
  ),
  OTEL_TRACES_SAMPLER_ARG: Type.Optional(
    Type.String({
      description: "read by the OpenTelemetry SDK: the ratio (0 to 1) of the traceidratio samplers",
    }),
  ),
};

const CommonEnvSchema = Type.Object({ ...CommonEnv, ...ServiceRuntimeEnv });

/** A refused configuration: the service stops with exit 78, naming the variable. */
export class ServiceConfigError extends Error {}

type CommonConfig = Static<typeof CommonEnvSchema>;

type Started = Awaited<ReturnType<ServiceDefinition<TObject>["start"]>>;

export interface PreparedService<C = CommonConfig> {
  name: string;
  runtime: ServiceRuntime<C>;
  /** What the service's `start` returned: its app (not yet listening), consumers and extra work. */
  started: Started;
  /** Everything to stop after HTTP has closed, in order. */
  stop: Array<[string, () => Promise<unknown>]>;
  /** Takes the service out of rotation (/readyz fails) while it keeps serving: the drain's first step. */
  leaveRotation(): void;
  telemetry: { shutdown(): Promise<void> };
}

/**
 * Everything of a service's start-up but listening: config from `env` (a bad value, or a placeholder in
 * production, throws `ServiceConfigError` naming the variable), telemetry, database and migrations, NATS and
 * streams, outbox relay, then the service's own start (consumers, background work) and the periodic purges. A
 * failure after the config is logged as fatal before it is thrown.
 */
export async function prepareService<S extends TObject>(
  definition: ServiceDefinition<S>,
  env: Record<string, string | undefined> = process.env,
): Promise<PreparedService<CommonConfig & Static<S>>> {
  const schema = Type.Object({ ...CommonEnvSchema.properties, ...definition.env.properties });
  let config: CommonConfig & Static<S>;
  try {
    config = loadConfig(schema, env) as unknown as typeof config;
    refusePlaceholdersInProduction(config);
    definition.checkConfig?.(config);
  } catch (e) {
    throw new ServiceConfigError((e as Error).message, { cause: e });
  }
  const resource = {
    serviceName: definition.name,
    serviceVersion: config.SERVICE_VERSION,
    deploymentEnvironment: config.DEPLOYMENT_ENVIRONMENT,
  };
  const telemetry = startTelemetry({ ...resource, otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
  const metrics = createMetrics({ ...resource, enabled: config.METRICS_ENABLED });
  const logger = createLogger({ name: definition.name, level: config.LOG_LEVEL, pretty: config.LOG_PRETTY });
  routeConsoleTo(logger);
  try {
    const topology: Topology = { prefix: config.EVENTS_PREFIX };
    const streams = definition.streams.map((s) => streamName(topology, s));
    const { pool, db, nats, relay } = await prepareConnections({
      name: definition.name,
      schema: definition.schema,
      migrations: definition.migrations,
      streams: definition.streams,
      publishes: definition.publishes,
      databaseUrl: config.DATABASE_URL,
      topology,
      logger,
      connectNats: () =>
        connectNats(config.NATS_URL, logger, definition.name, {
          user: config.NATS_USER,
          pass: config.NATS_PASSWORD,
          tlsCaFile: config.NATS_TLS_CA,
        }),
      streamsWaitMs: config.NATS_STREAMS_WAIT_MS,
      pool: {
        max: config.DB_POOL_MAX,
        statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
        queryTimeoutMs: config.DB_QUERY_TIMEOUT_MS,
        settings: definition.dbSettings?.(config),
        onError: (e: Error) => logger.warn({ err: e.message }, "postgres connection lost"),
      },
      relay: {
        meter: metrics.meter,
        gatherMs: config.OUTBOX_GATHER_MS,
      },
    });
    observePool(metrics.meter, pool, definition.schema);
    observeNats(metrics.meter, nats);
    // Its streams against their limits and its durables' unread and ack floor, as the server sees them; the
    // durables are those start() returns, read at each scrape.
    let consumers: RunningConsumer[] = [];
    observeJetStream(metrics.meter, await jetstreamManager(nats), {
      streams,
      durables: () => consumers,
    });
    if (relay) observeOutbox(metrics.meter, db);
    // Requests need Postgres; events wait in the outbox while NATS is away, so a NATS outage keeps pods in rotation.
    // Once told to stop, the replica leaves rotation while it still serves (the drain).
    let stopping = false;
    const readiness = {
      postgres: () => pingDb(db),
      nats: optionalCheck(() => pingNats(nats)),
      shutdown: async () => {
        if (stopping) throw new Error("shutting down");
      },
    };
    const http: HttpServerSettings = {
      trustProxy: splitList(config.TRUST_PROXY),
      timeouts: {
        requestMs: config.HTTP_REQUEST_TIMEOUT_MS,
        connectionMs: config.HTTP_CONNECTION_TIMEOUT_MS,
        handlerMs: config.HTTP_HANDLER_TIMEOUT_MS,
      },
    };
    const outboxCommitted = relay ? () => relay.wake() : () => {};
    const runtime = { config, logger, db, pool, nats, topology, readiness, http, metrics, outboxCommitted };
    const started = await definition.start(runtime);
    consumers = started.consumers ?? [];
    const purges = startPeriodicJobs(
      [
        ...(definition.publishes ? [outboxPurgeJob(db, config.OUTBOX_RETENTION_MS)] : []),
        ...(consumers.length > 0
          ? [
              inboxPurgeJob({
                db,
                jsm: await jetstreamManager(nats),
                streams,
                marginMs: config.INBOX_RETENTION_MARGIN_MS,
                logger,
              }),
            ]
          : []),
        ...(started.purges ?? []),
      ],
      { intervalMs: config.PURGE_INTERVAL_MS, logger, meter: metrics.meter },
    );
    return {
      name: definition.name,
      runtime,
      started,
      stop: [
        ...consumers.map((c, i): [string, () => Promise<unknown>] => [`consumer ${i}`, () => c.stop()]),
        ...(started.stop ?? []),
        ["purges", () => purges.stop()],
        ["outbox relay", async () => relay?.stop()],
        ["nats", () => nats.drain()],
        ["postgres", () => db.destroy()],
        ["metrics", () => metrics.shutdown()],
        ["telemetry", () => telemetry.shutdown()],
      ],
      leaveRotation: () => {
        stopping = true;
      },
      telemetry,
    };
  } catch (e) {
    await reportStartupFailure(logger, telemetry, e);
    throw e;
  }
}

/**
 * Listens on the prepared service's port and installs the SIGTERM sequence: /readyz fails at once and serving goes
 * on for SHUTDOWN_DRAIN_MS (load balancers stop sending meanwhile), then HTTP closes (waiting for requests in
 * flight), then everything `prepare` started stops, in order. A failure is logged as fatal before it is thrown.
 */
export async function listen<C extends CommonConfig>(prepared: PreparedService<C>): Promise<void> {
  const { runtime, started } = prepared;
  try {
    await started.app.listen({ port: started.port, host: started.host ?? runtime.config.HOST });
    installGracefulShutdown(runtime.logger, [["http", () => started.app.close()], ...prepared.stop], {
      drainMs: runtime.config.SHUTDOWN_DRAIN_MS,
      onSignal: prepared.leaveRotation,
    });
  } catch (e) {
    await reportStartupFailure(runtime.logger, prepared.telemetry, e);
    throw e;
  }
}

/**
 * The one start-up sequence of every service's main.ts: `prepareService`, then `listen`. A refused config exits
 * 78 (the message on stderr), any other start-up failure exits 1.
 */
export async function runService<S extends TObject>(definition: ServiceDefinition<S>): Promise<void> {
  try {
    await listen(await prepareService(definition));
  } catch (e) {
    if (e instanceof ServiceConfigError) {
      process.stderr.write(`${definition.name}: ${e.message}\n`);
      process.exit(78);
    }
    process.exit(1);
  }
}

async function reportStartupFailure(
  logger: Logger,
  telemetry: { shutdown(): Promise<void> },
  error: unknown,
): Promise<void> {
  logger.fatal({ err: error }, "start-up failed");
  await telemetry.shutdown().catch(() => {});
}
