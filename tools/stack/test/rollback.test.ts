/**
 * A rollback: the previous release's images start on the schema the newest release migrated. Here every schema has
 * a migration these services do not know, as the next release would leave it; the whole stack still starts, serves
 * the demo data and says in its log which migrations it did not know.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { connectTestNats, createTestDatabase, type TestDatabase, testNatsUrl } from "@humanpass/testing";
import { REPO_ROOT } from "@humanpass/testing/service-process";
import { jetstreamManager } from "@nats-io/jetstream";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { randomPrefix, SERVICE_NAMES, type Stack, startStack } from "../src/stack.ts";

const NEXT_RELEASE_MIGRATION = "9999_next_release";
const SCHEMAS = ["verifier", "chain_indexer", "attestations", "agent_auth", "payment_gateway", "webhooks"];
const run = promisify(execFile);

let database: TestDatabase;
let stack: Stack | undefined;
const prefix = randomPrefix();
const logs: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase("rollback");
  await run(process.execPath, ["deploy/migrate/run.mjs"], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: database.url },
  });
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    for (const schema of SCHEMAS) {
      await client.query(`insert into ${schema}.kysely_migration (name, timestamp) values ($1, $2)`, [
        NEXT_RELEASE_MIGRATION,
        new Date().toISOString(),
      ]);
    }
  } finally {
    await client.end();
  }
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await database?.drop();
  const nc = await connectTestNats();
  const jsm = await jetstreamManager(nc);
  for await (const s of jsm.streams.list()) {
    if (s.config.name.startsWith(`${prefix.toUpperCase()}_`)) await jsm.streams.delete(s.config.name);
  }
  await nc.close();
}, 60_000);

it("starts every service on a later release's schema, naming the migrations it does not know", async () => {
  stack = await startStack({
    databaseUrl: database.url,
    natsUrl: testNatsUrl(),
    prefix,
    log: (service, line) => logs.push(`${service} | ${line}`),
    logLevel: "warn",
  });
  for (const service of SERVICE_NAMES) {
    const warning = logs
      .filter((l) => l.startsWith(`${service} | {`))
      .map((l) => JSON.parse(l.slice(service.length + 3)))
      .find((record) => record.msg?.startsWith("the schema is a later release's"));
    expect(warning, `${service}'s warning`).toMatchObject({ unknownMigrations: [NEXT_RELEASE_MIGRATION] });
    expect((await fetch(`${stack.urls[service]}/readyz`)).status).toBe(200);
  }
  const migrate = await run(process.execPath, ["deploy/migrate/run.mjs", "verifier"], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: database.url },
  });
  expect(migrate.stdout).toBe(
    `verifier: a later release's schema (${NEXT_RELEASE_MIGRATION} unknown here): left as it is\n`,
  );
}, 240_000);
