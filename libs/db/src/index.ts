import type { Meter } from "@opentelemetry/api";
import { DEFAULT_MIGRATION_TABLE, Kysely, type Migration, Migrator, PostgresDialect, sql } from "kysely";
import pg from "pg";

// int8 and numeric arrive as strings by default; counts and ids we store fit in a JS number only when they
// are int4, so int8 stays a string and callers convert explicitly where they know the range.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

export interface DbOptions {
  connectionString: string;
  /** The service's own schema; it comes first in the search_path. */
  schema: string;
  max?: number;
  applicationName?: string;
  /** Session settings for every connection (e.g. `{ jit: "off" }`), sent with the startup message. */
  settings?: Record<string, string>;
  /** Postgres cancels a statement running longer (`statement_timeout`); none when absent. */
  statementTimeoutMs?: number;
  /** The client gives up on a query with no answer by then, whatever the server does; none when absent. */
  queryTimeoutMs?: number;
  /** Where pool errors go (a connection lost while idle); they would otherwise go unseen. */
  onError?: (error: Error) => void;
}

export function createPool(options: DbOptions): pg.Pool {
  const sessionSettings = {
    ...(options.statementTimeoutMs ? { statement_timeout: String(options.statementTimeoutMs) } : {}),
    ...options.settings,
  };
  const settings = Object.entries(sessionSettings)
    .map(([key, value]) => ` -c ${key}=${value}`)
    .join("");
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? options.schema,
    options: `-c search_path=${quoteIdent(options.schema)},public${settings}`,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
    // A peer gone without a FIN (a dropped NAT entry, a dead host) is noticed instead of waited on forever.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // A connection lost while checked out or idle must not crash the process: the query in flight rejects, and
  // the next one gets a fresh connection or the error. It is reported, never dropped silently.
  const report = options.onError ?? ((e: Error) => process.emitWarning(`postgres pool: ${e.message}`));
  pool.on("error", report);
  pool.on("connect", (client) => {
    client.on("error", report);
  });
  return pool;
}

export function createDb<DB>(options: DbOptions): Kysely<DB> {
  return kyselyOn<DB>(createPool(options));
}

/** Kysely over a pool the caller also queries directly (e.g. with named prepared statements: `{ name, text, values }`). */
export function kyselyOn<DB>(pool: pg.Pool): Kysely<DB> {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid SQL identifier: ${name}`);
  return `"${name}"`;
}

/**
 * The contract half of expand → contract: a migration that drops or renames what code used. It names what it
 * removes and the release whose code stopped using them, an earlier one than the release shipping it, so that the
 * images of the release before still run on the schema after it (a rollback).
 */
export interface ContractMigration extends Migration {
  contract: { removes: string[]; unusedSince: string };
}

export interface MigrateOptions {
  schema: string;
  migrations: Record<string, Migration>;
  /**
   * Called instead of migrating when the schema has every migration this release knows plus later ones: the
   * release before the newest is starting (a rollback). Expand/contract keeps its code working on that schema.
   */
  onNewerSchema?: (unknownMigrations: string[]) => void;
}

/**
 * Applies the service's migrations inside its schema. Kysely's Postgres adapter takes an advisory lock, so
 * replicas starting together run them once.
 */
export async function migrateToLatest(db: Kysely<any>, options: MigrateOptions): Promise<string[]> {
  // "if not exists" still races between replicas starting together; the lock makes the check and create one step.
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`humanpass:schema:${options.schema}`}))`.execute(trx);
    await sql`create schema if not exists ${sql.id(options.schema)}`.execute(trx);
  });
  // Kysely refuses a history naming a migration it was not given ("corrupted migrations"), which would keep the
  // previous image from starting after a release migrated: a rollback that never starts.
  const executed = await executedMigrations(db, options.schema);
  const unknown = executed.filter((name) => !(name in options.migrations));
  if (unknown.length > 0) {
    const pending = Object.keys(options.migrations).filter((name) => !executed.includes(name));
    if (pending.length > 0) {
      throw new Error(
        `schema ${options.schema} has migrations this release does not know (${unknown.join(", ")}) and lacks ` +
          `some it does (${pending.join(", ")}): it is not the schema of a later release of this one`,
      );
    }
    options.onNewerSchema?.(unknown);
    return [];
  }
  const migrator = new Migrator({
    db: db.withSchema(options.schema),
    migrationTableSchema: options.schema,
    provider: { getMigrations: async () => options.migrations },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

async function executedMigrations(db: Kysely<any>, schema: string): Promise<string[]> {
  const { rows } = await sql<{ present: boolean }>`
    select to_regclass(${`${quoteIdent(schema)}.${DEFAULT_MIGRATION_TABLE}`}) is not null as present`.execute(
    db,
  );
  if (!rows[0]?.present) return [];
  const history = await sql<{ name: string }>`
    select name from ${sql.table(`${schema}.${DEFAULT_MIGRATION_TABLE}`)}`.execute(db);
  return history.rows.map((r) => r.name);
}

/** Creates the database named in the URL when it does not exist (development and tests). */
export async function ensureDatabase(connectionString: string): Promise<void> {
  const url = new URL(connectionString);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!name) return;
  url.pathname = "/postgres";
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query("select 1 from pg_database where datname = $1", [name]);
    if (!rowCount) {
      await client.query(`create database ${quoteIdent(name)}`).catch((e: { code?: string }) => {
        if (e.code !== "42P04") throw e; // created concurrently by another process
      });
    }
  } finally {
    await client.end();
  }
}

/** Drops the database named in the URL, closing its sessions (tests and benchmarks cleaning up). */
export async function dropDatabase(connectionString: string): Promise<void> {
  const url = new URL(connectionString);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = "/postgres";
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`drop database if exists ${quoteIdent(name)} with (force)`);
  } finally {
    await client.end();
  }
}

const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
// SQLSTATE classes and codes that say the server could not run the statement now, not that it is wrong:
// connection exceptions (08), insufficient resources (53), operator intervention (57: shutdown, cannot connect now,
// statement_timeout), serialization failure and deadlock (40001, 40P01), lock_timeout (55P03).
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0[1-4]|57014|40001|40P01|55P03)/;
// node-postgres reports a lost or never-made connection, and its own query_timeout, as plain Errors.
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection closed/i;

/**
 * Whether an error says Postgres did not answer (refused, lost, timed out, shutting down, overloaded) rather than
 * that the statement or its data were wrong: such a failure is worth retrying as is, and is never the caller's
 * fault.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && typeof e === "object" && depth < 5; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === "string" && (UNREACHABLE_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code)))
      return true;
    if (typeof message === "string" && UNAVAILABLE_MESSAGE.test(message)) return true;
    if (e instanceof AggregateError && e.errors.some(isDatabaseUnavailable)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** Resolves when a trivial query succeeds; used by readiness checks. */
export async function pingDb(db: Kysely<any>): Promise<void> {
  await sql`select 1`.execute(db);
}

/**
 * The pool's OpenTelemetry semantic-convention gauges (`db.client.connection.count` by state, `.pending_requests`,
 * `.max`), read when metrics are collected. `poolName` is the service's schema: bounded.
 */
export function observePool(meter: Meter, pool: pg.Pool, poolName: string): void {
  const name = { "db.client.connection.pool.name": poolName };
  const count = meter.createObservableUpDownCounter("db.client.connection.count", {
    description: "Connections of the pool, by state",
    unit: "{connection}",
  });
  const pending = meter.createObservableUpDownCounter("db.client.connection.pending_requests", {
    description: "Queries waiting for a connection of the pool",
    unit: "{request}",
  });
  const max = meter.createObservableUpDownCounter("db.client.connection.max", {
    description: "Most connections the pool opens",
    unit: "{connection}",
  });
  meter.addBatchObservableCallback(
    (result) => {
      result.observe(count, pool.totalCount - pool.idleCount, {
        ...name,
        "db.client.connection.state": "used",
      });
      result.observe(count, pool.idleCount, { ...name, "db.client.connection.state": "idle" });
      result.observe(pending, pool.waitingCount, name);
      result.observe(max, pool.options.max ?? 10, name);
    },
    [count, pending, max],
  );
}

export { sql };
export type Pool = pg.Pool;
export type {
  ColumnType,
  Generated,
  Insertable,
  Kysely,
  Migration,
  Selectable,
  Transaction,
  Updateable,
} from "kysely";
