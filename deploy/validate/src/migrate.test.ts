import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createTestDatabase, REPO_ROOT, type TestDatabase } from "@humanpass/testing";
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
