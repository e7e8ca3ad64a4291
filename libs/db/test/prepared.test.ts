import { createTestDatabase, type TestDatabase } from "@humanpass/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createDb, type Kysely, prepared, sql } from "../src";

let database: TestDatabase;
let db: Kysely<any>;

beforeAll(async () => {
  database = await createTestDatabase("db_prepared");
  // One connection, so every statement below runs in the session whose prepared statements are listed.
  db = createDb<any>({ connectionString: database.url, schema: "public", max: 1 });
});

afterAll(async () => {
  await db.destroy();
  await database.drop();
});

async function preparedInSession(): Promise<string[]> {
  const { rows } = await sql<{ statement: string }>`
    select statement from pg_prepared_statements order by prepare_time`.execute(db);
  return rows.map((r) => r.statement);
}

it("runs a marked statement as one named prepared statement per connection, with its own values each time", async () => {
  const sums = [];
  for (const n of [1, 2, 3]) {
    const { rows } = await prepared(sql<{ sum: number }>`select ${n}::int + 40 as sum`).execute(db);
    sums.push(rows[0]!.sum);
  }
  expect(sums).toEqual([41, 42, 43]);
  const statements = await preparedInSession();
  expect(statements).toHaveLength(1);
  expect(statements[0]).toContain("select $1::int + 40 as sum");
});

it("leaves statements without the mark unprepared", async () => {
  const before = await preparedInSession();
  const { rows } = await sql<{ sum: number }>`select ${2}::int + 2 as sum`.execute(db);
  expect(rows[0]!.sum).toBe(4);
  expect(await preparedInSession()).toEqual(before);
});

it("reports a failing prepared statement's error to its caller and keeps the connection usable", async () => {
  await expect(prepared(sql`select 1 / ${0}::int`).execute(db)).rejects.toThrow("division by zero");
  const { rows } = await prepared(sql<{ ok: number }>`select ${1}::int as ok`).execute(db);
  expect(rows[0]!.ok).toBe(1);
});
