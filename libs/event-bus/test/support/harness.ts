import { createDb, migrateToLatest, sql } from "@humanpass/db";
import {
  connectTestNats,
  createTestDatabase,
  deleteTestStreams,
  type TestDatabase,
  testTopology,
} from "@humanpass/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Kysely } from "kysely";
import pino from "pino";
import {
  disableOutboxNotifyMigration,
  type EventHandler,
  ensureStreams,
  outboxMigration,
  purgeIndexesMigration,
} from "../../src/index.ts";

export const SCHEMA = "svc";
export const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

/** A database with the outbox/inbox tables and an `applied` table that records every handler run. */
export async function setUpDatabase(label: string): Promise<{ database: TestDatabase; db: Kysely<any> }> {
  const database = await createTestDatabase(label);
  const db = createDb<any>({ connectionString: database.url, schema: SCHEMA, max: 8 });
  await migrateToLatest(db, {
    schema: SCHEMA,
    migrations: {
      "0001_outbox": outboxMigration,
      "0002_applied": {
        async up(d) {
          // No unique key on purpose: a second application of one event must be visible, not hidden.
          await d.schema
            .createTable("applied")
            .addColumn("event_id", "text", (c) => c.notNull())
            .addColumn("n", "integer", (c) => c.notNull())
            .execute();
        },
      },
      "0003_purge_indexes": purgeIndexesMigration,
      "0004_disable_outbox_notify": disableOutboxNotifyMigration,
    },
  });
  return { database, db };
}

export const recordApplied: EventHandler = async (event, trx) => {
  await trx
    .insertInto("applied")
    .values({ event_id: event.id, n: (event.data as { n: number }).n })
    .execute();
};

export async function appliedCounts(db: Kysely<any>): Promise<{ total: number; distinct: number }> {
  const { rows } = await sql<{ total: string; distinct: string }>`
    select count(*) as total, count(distinct event_id) as distinct from applied`.execute(db);
  return { total: Number(rows[0].total), distinct: Number(rows[0].distinct) };
}

/** A payload valid for `agent_auth.human_not_registered`, numbered so tests can tell events apart. */
export function testEvent(n: number) {
  return {
    stream: "AGENT_AUTH" as const,
    source: "agent-auth",
    type: "human_not_registered",
    data: { did: `did:test:${n}`, resource: "https://example.test/r", n },
  };
}

export interface EventsTestContext {
  database: TestDatabase;
  db: Kysely<any>;
  nc: NatsConnection;
  topology: { prefix: string };
  /** Deletes the streams and the database. */
  tearDown(): Promise<void>;
}

/** One test file's own database, NATS connection and `AGENT_AUTH` stream under its own prefix. */
export async function setUpEventsTest(label: string): Promise<EventsTestContext> {
  const { database, db } = await setUpDatabase(label);
  const nc = await connectTestNats();
  const topology = testTopology();
  await ensureStreams(await jetstreamManager(nc), topology, ["AGENT_AUTH"]);
  return {
    database,
    db,
    nc,
    topology,
    async tearDown() {
      await deleteTestStreams(nc, topology);
      await nc.close();
      await db.destroy();
      await database.drop();
    },
  };
}
