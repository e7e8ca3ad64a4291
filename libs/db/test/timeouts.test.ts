import { createTestDatabase, TcpProxy, type TestDatabase, testDatabaseUrl } from "@humanpass/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, isDatabaseUnavailable, sql } from "../src/index.ts";

let database: TestDatabase;
let proxy: TcpProxy;

beforeAll(async () => {
  database = await createTestDatabase("db_timeouts");
  proxy = await TcpProxy.forUrl(testDatabaseUrl()).start();
});

afterAll(async () => {
  await proxy.stop();
  await database.drop();
});

describe("pool time limits", () => {
  it("has Postgres cancel a statement that runs past statement_timeout", async () => {
    const db = createDb({ connectionString: database.url, schema: "public", statementTimeoutMs: 200 });
    try {
      const error = await sql`select pg_sleep(2)`.execute(db).catch((e) => e);
      expect(error).toMatchObject({ code: "57014" });
      expect(isDatabaseUnavailable(error)).toBe(true);
    } finally {
      await db.destroy();
    }
  });

  it("gives up on a query a stalled server never answers after query_timeout", async () => {
    const db = createDb({ connectionString: proxy.url(database.url), schema: "public", queryTimeoutMs: 500 });
    try {
      await sql`select 1`.execute(db);
      proxy.stall();
      const started = Date.now();
      const error = await sql`select 1`.execute(db).catch((e) => e);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(isDatabaseUnavailable(error)).toBe(true);
    } finally {
      proxy.cut();
      proxy.restore();
      await db.destroy();
    }
  });

  it("tells an unavailable database from a wrong statement", async () => {
    const db = createDb({ connectionString: database.url, schema: "public" });
    try {
      const wrong = await sql`select * from no_such_table`.execute(db).catch((e) => e);
      expect(isDatabaseUnavailable(wrong)).toBe(false);
      expect(
        isDatabaseUnavailable(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })),
      ).toBe(true);
      expect(isDatabaseUnavailable(new Error("Connection terminated unexpectedly"))).toBe(true);
    } finally {
      await db.destroy();
    }
  });
});
