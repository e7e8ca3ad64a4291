/**
 * Compose's counterpart of the roles the CloudNativePG Cluster creates (deploy/k8s/base/postgres/cluster.yaml): one
 * login role per service, owning the schema of the same name and nothing else, with a connection limit. Run once
 * before the services start, as the Postgres superuser (the `postgres-roles` service of docker-compose.yml, in a
 * service image, which has @humanpass/db); each service then connects as its role and migrates its own schema.
 * Idempotent: a second run sets the passwords and limits again. Objects a schema already holds that another role
 * owns (a volume from before the roles, when every service connected as the superuser) are handed to its role.
 * Passwords: <ROLE>_DB_PASSWORD (VERIFIER_DB_PASSWORD, CHAIN_INDEXER_DB_PASSWORD, …); limit: DB_ROLE_CONNECTION_LIMIT.
 */
import { createPool } from "@humanpass/db";

/** Role = schema; example_subscriber is the `subscriber` profile's outside team (examples/subscriber). */
const ROLES = [
  "verifier",
  "chain_indexer",
  "attestations",
  "agent_auth",
  "payment_gateway",
  "webhooks",
  "example_subscriber",
];

const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write("DATABASE_URL (the superuser's) is required\n");
  process.exit(78);
}
const limit = Number(process.env.DB_ROLE_CONNECTION_LIMIT ?? 30);
if (!Number.isInteger(limit) || limit < 1) {
  process.stderr.write("DB_ROLE_CONNECTION_LIMIT: an integer >= 1\n");
  process.exit(78);
}
const passwords = Object.fromEntries(
  ROLES.map((role) => [role, process.env[`${role.toUpperCase()}_DB_PASSWORD`] ?? ""]),
);
const missing = ROLES.filter((role) => !passwords[role]);
if (missing.length > 0) {
  process.stderr.write(`${missing.map((r) => `${r.toUpperCase()}_DB_PASSWORD`).join(", ")} required\n`);
  process.exit(78);
}

const pool = createPool({
  connectionString: url,
  schema: "public",
  max: 1,
  applicationName: "postgres-roles",
});
const client = await pool.connect();
/** Runs the statement that format() (server side, %I identifiers and %L literals quoted by Postgres) builds. */
async function run(template, ...args) {
  const placeholders = args.map((_, i) => `$${i + 1}::text`).join(", ");
  const { rows } = await client.query(`select format('${template}', ${placeholders}) as statement`, args);
  await client.query(rows[0].statement);
}
try {
  await client.query("begin");
  // Two runs at once (two `up`s) queue here instead of racing on CREATE ROLE.
  await client.query("select pg_advisory_xact_lock(hashtext('humanpass postgres-roles'))");
  for (const role of ROLES) {
    const { rowCount } = await client.query("select 1 from pg_roles where rolname = $1", [role]);
    if (!rowCount) await run("create role %I", role);
    await run(
      "alter role %I login nosuperuser nocreatedb nocreaterole noreplication password %L connection limit %s",
      role,
      passwords[role],
      String(limit),
    );
    // CREATE: the services' `create schema if not exists` at start-up needs it even when the schema exists.
    await run("grant connect, create on database %I to %I", (await currentDatabase()) ?? "", role);
    await run("create schema if not exists %I authorization %I", role, role);
    await run("alter schema %I owner to %I", role, role);
    const { rows: objects } = await client.query(
      `select c.oid::regclass::text as name, c.relkind from pg_class c
         where c.relnamespace = $1::regnamespace and c.relowner <> $2::regrole
           and c.relkind in ('r', 'p', 'v', 'm', 'f') order by c.oid`,
      [role, role],
    );
    // A table's own sequences and indexes follow it.
    for (const { name } of objects) await run("alter table %s owner to %I", name, role);
    const { rows: sequences } = await client.query(
      `select c.oid::regclass::text as name from pg_class c
         where c.relnamespace = $1::regnamespace and c.relowner <> $2::regrole and c.relkind = 'S'`,
      [role, role],
    );
    for (const { name } of sequences) await run("alter sequence %s owner to %I", name, role);
    const { rows: routines } = await client.query(
      `select p.oid::regprocedure::text as name from pg_proc p
         where p.pronamespace = $1::regnamespace and p.proowner <> $2::regrole`,
      [role, role],
    );
    for (const { name } of routines) await run("alter routine %s owner to %I", name, role);
    const { rows: types } = await client.query(
      `select t.oid::regtype::text as name from pg_type t
         where t.typnamespace = $1::regnamespace and t.typowner <> $2::regrole and t.typtype in ('e', 'd')`,
      [role, role],
    );
    for (const { name } of types) await run("alter type %s owner to %I", name, role);
  }
  // No role may create in (or read) public: each reaches its own schema only.
  await client.query("revoke all on schema public from public");
  await client.query("commit");
  process.stdout.write(`roles: ${ROLES.join(", ")} (connection limit ${limit} each)\n`);
} catch (e) {
  await client.query("rollback").catch(() => {});
  throw e;
} finally {
  client.release();
  await pool.end();
}

async function currentDatabase() {
  const { rows } = await client.query("select current_database() as name");
  return rows[0].name;
}
