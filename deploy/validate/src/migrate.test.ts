import { execFile } from "node:child_process";
import { promisify } from "node:util";
import {
  connectTestNats,
  createTestDatabase,
  deleteTestStreams,
  REPO_ROOT,
  type TestDatabase,
  testNatsUrl,
  testTopology,
} from "@humanpass/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const migrate = (url: string, ...services: string[]) =>
  run(process.execPath, ["deploy/migrate/run.mjs", ...services], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: url },
  });

describe("deploy/migrate/run.mjs (make migrate, the Kubernetes migration job)", () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase("migrate");
  });

  afterAll(async () => {
    await database?.drop();
  });

  it("applies each named service's migrations inside its own schema, once", async () => {
    const first = await migrate(database.url, "verifier", "agent-auth");
    expect(first.stdout).toMatch(/^verifier: applied .+\nagent-auth: applied .+\n$/);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        "select table_schema from information_schema.tables where table_name = 'outbox' order by table_schema",
      );
      expect(rows.map((r) => r.table_schema)).toEqual(["agent_auth", "verifier"]);
    } finally {
      await client.end();
    }
    const second = await migrate(database.url, "verifier", "agent-auth");
    expect(second.stdout).toBe("verifier: up to date\nagent-auth: up to date\n");
  });

  it("refuses an unknown service before touching the database", async () => {
    const failure = await migrate(database.url, "verifyer").then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failure?.code).toBe(64);
    expect(failure?.stderr).toContain("unknown service: verifyer");
  });
});

describe("deploy/migrate/topology.mjs (make migrate, compose's nats-topology, the migration job)", () => {
  it("creates every stream, the dead-letter stream and the services' durables, and runs again unchanged", async () => {
    const topology = testTopology();
    const nc = await connectTestNats();
    try {
      for (let i = 0; i < 2; i++) {
        const { stdout } = await run(process.execPath, ["deploy/migrate/topology.mjs"], {
          cwd: REPO_ROOT,
          env: { ...process.env, NATS_URL: testNatsUrl(), EVENTS_PREFIX: topology.prefix, NATS_USER: "" },
        });
        const p = topology.prefix.toUpperCase();
        const streams = ["VERIFIER", "CHAIN", "AGENT_AUTH", "PAYMENTS", "DEAD_LETTERS"].map(
          (s) => `${p}_${s}`,
        );
        const durables = [
          "CHAIN/attestations-api-chain",
          "VERIFIER/attestations-api-verifier",
          "VERIFIER/webhooks-verifier",
          "CHAIN/webhooks-chain",
          "AGENT_AUTH/webhooks-agent_auth",
          "PAYMENTS/webhooks-payments",
        ].map((d) => `${p}_${d}`);
        expect(stdout).toBe(`streams and durables applied: ${[...streams, ...durables].join(", ")}\n`);
      }
    } finally {
      await deleteTestStreams(nc, topology);
      await nc.close();
    }
  });
});
