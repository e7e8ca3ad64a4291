import {
  createDb,
  createPool,
  type DbOptions,
  ensureDatabase,
  type Kysely,
  kyselyOn,
  type Migration,
  migrateToLatest,
  type Pool,
} from "@humanpass/db";
import {
  jetstreamManager,
  type NatsConnection,
  type OutboxRelay,
  type OutboxRelayOptions,
  type StreamName,
  startOutboxRelay,
  streamName,
  type Topology,
  waitForStreams,
} from "@humanpass/event-bus";
import type { Logger } from "@humanpass/telemetry";

export interface ConnectionsOptions {
  /** Service name: the pool's and the migrations' application_name. */
  name: string;
  schema: string;
  migrations: Record<string, Migration>;
  /** Streams the service publishes to or reads from: waited for, never created. */
  streams: StreamName[];
  /** Whether the service writes events (runs an outbox relay). */
  publishes: boolean;
  databaseUrl: string;
  topology: Topology;
  logger: Logger;
  /** Opens the service's NATS connection; it runs beside the database's migrations. */
  connectNats(): Promise<NatsConnection>;
  streamsWaitMs?: number;
  pool?: Pick<DbOptions, "max" | "statementTimeoutMs" | "queryTimeoutMs" | "settings" | "onError">;
  relay?: Omit<OutboxRelayOptions, "nats" | "schema" | "logger" | "connectionString">;
}

export interface Connections {
  pool: Pool;
  /** kysely on `pool`. */
  db: Kysely<any>;
  nats: NatsConnection;
  /** Present when the service publishes. */
  relay?: OutboxRelay;
}

/**
 * The connected part of a service's start-up, in its one order: the database (created when missing) and its
 * migrations beside the NATS connection and the wait for the service's streams, then the pool, then the outbox
 * relay. Each step is logged at debug level as it completes, so a change of order shows in the logs of services
 * and of the test harnesses that start their services with it.
 */
export async function prepareConnections(options: ConnectionsOptions): Promise<Connections> {
  const { logger } = options;
  const [, nats] = await Promise.all([
    ensureDatabase(options.databaseUrl).then(async () => {
      const applied = await migrate(options, (newer) =>
        logger.warn(
          { unknownMigrations: newer },
          "the schema is a later release's (a rollback?): starting on it without migrating",
        ),
      );
      if (applied.length > 0) logger.info({ migrations: applied }, "migrations applied");
      logger.debug({ step: "migrations" }, "database migrated");
    }),
    options.connectNats().then(async (nats) => {
      const streams = options.streams.map((s) => streamName(options.topology, s));
      await waitForStreams(await jetstreamManager(nats), streams, {
        logger,
        timeoutMs: options.streamsWaitMs,
      });
      logger.debug({ step: "streams", streams }, "streams found");
      return nats;
    }),
  ]);
  const pool = createPool({
    connectionString: options.databaseUrl,
    schema: options.schema,
    applicationName: options.name,
    ...options.pool,
  });
  const db = kyselyOn<any>(pool);
  let relay: OutboxRelay | undefined;
  if (options.publishes) {
    relay = startOutboxRelay({
      ...options.relay,
      nats,
      schema: options.schema,
      logger,
      connectionString: options.databaseUrl,
    });
    logger.debug({ step: "relay" }, "outbox relay started");
  }
  return { pool, db, nats, relay };
}

/** Migrations run on a connection of their own: the service's session settings (a statement timeout) do not bound them. */
async function migrate(
  options: Pick<ConnectionsOptions, "name" | "schema" | "migrations" | "databaseUrl">,
  onNewerSchema: (unknownMigrations: string[]) => void,
): Promise<string[]> {
  const db = createDb<any>({
    connectionString: options.databaseUrl,
    schema: options.schema,
    max: 1,
    applicationName: options.name,
  });
  try {
    return await migrateToLatest(db, {
      schema: options.schema,
      migrations: options.migrations,
      onNewerSchema,
    });
  } finally {
    await db.destroy();
  }
}
