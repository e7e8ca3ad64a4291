import { createTestDatabase, type TestDatabase } from "@humanpass/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createDb, type Migration, migrateToLatest, sql } from "../src/index.ts";

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase("db_migrate");
});

afterAll(async () => {
  await database.drop();
});

const migrations: Record<string, Migration> = {
  "0001_counter": {
    async up(db) {
      await db.schema.createTable("runs").addColumn("n", "integer").execute();
      // A second run of this migration would add a second row.
      await sql`insert into runs values (1)`.execute(db);
      await sql`select pg_sleep(0.2)`.execute(db);
    },
  },
  "0002_more": {
    async up(db) {
      await db.schema.alterTable("runs").addColumn("label", "text").execute();
    },
  },
};

it("applies each migration once when several replicas start together, inside the service schema", async () => {
  const dbs = Array.from({ length: 4 }, () =>
    createDb<any>({ connectionString: database.url, schema: "svc_a", max: 2 }),
  );
  try {
    const results = await Promise.all(dbs.map((db) => migrateToLatest(db, { schema: "svc_a", migrations })));
    expect(results.flat().sort()).toEqual(["0001_counter", "0002_more"]);
    const { rows } = await sql<{ n: number }>`select n from svc_a.runs`.execute(dbs[0]);
    expect(rows).toEqual([{ n: 1 }]);
    expect(await migrateToLatest(dbs[0], { schema: "svc_a", migrations })).toEqual([]);
  } finally {
    await Promise.all(dbs.map((db) => db.destroy()));
  }
});

it("keeps each service's tables and migration history in its own schema", async () => {
  const db = createDb<any>({ connectionString: database.url, schema: "svc_b", max: 1 });
  try {
    await migrateToLatest(db, {
      schema: "svc_b",
      migrations: { "0001_counter": migrations["0001_counter"] },
    });
    const { rows } = await sql<{ table_schema: string; table_name: string }>`
      select table_schema, table_name from information_schema.tables
      where table_schema in ('svc_a', 'svc_b') and table_name not like 'kysely_migration_lock'
      order by 1, 2`.execute(db);
    expect(rows.filter((r) => r.table_schema === "svc_b").map((r) => r.table_name)).toEqual([
      "kysely_migration",
      "runs",
    ]);
  } finally {
    await db.destroy();
  }
});

it("applies session settings to every connection of the pool", async () => {
  const db = createDb<any>({
    connectionString: database.url,
    schema: "svc_a",
    max: 3,
    settings: { jit: "off" },
  });
  try {
    const answers = await Promise.all(
      [1, 2, 3].map(async () => (await sql<{ jit: string }>`show jit`.execute(db)).rows[0].jit),
    );
    expect(answers).toEqual(["off", "off", "off"]);
    const { rows } = await sql<{ search_path: string }>`show search_path`.execute(db);
    expect(rows[0].search_path).toBe('"svc_a",public');
  } finally {
    await db.destroy();
  }
});

it("lets the previous release start on a schema a later release migrated, naming the migrations it does not know", async () => {
  const db = createDb<any>({ connectionString: database.url, schema: "svc_rollback", max: 1 });
  try {
    await migrateToLatest(db, { schema: "svc_rollback", migrations });
    const previous = { "0001_counter": migrations["0001_counter"] };
    const newer: string[][] = [];
    const applied = await migrateToLatest(db, {
      schema: "svc_rollback",
      migrations: previous,
      onNewerSchema: (names) => newer.push(names),
    });
    expect(applied).toEqual([]);
    expect(newer).toEqual([["0002_more"]]);
    const { rows } = await sql<{
      name: string;
    }>`select name from svc_rollback.kysely_migration order by name`.execute(db);
    expect(rows.map((r) => r.name)).toEqual(["0001_counter", "0002_more"]);
  } finally {
    await db.destroy();
  }
});

it("refuses a schema that is not a later release's: unknown migrations and some of its own missing", async () => {
  const db = createDb<any>({ connectionString: database.url, schema: "svc_forked", max: 1 });
  try {
    await migrateToLatest(db, {
      schema: "svc_forked",
      migrations: { "0001_counter": migrations["0001_counter"] },
    });
    const forked: Record<string, Migration> = {
      "0001_other": {
        up: async (d) => void (await d.schema.createTable("other").addColumn("n", "integer").execute()),
      },
    };
    await expect(migrateToLatest(db, { schema: "svc_forked", migrations: forked })).rejects.toThrow(
      "schema svc_forked has migrations this release does not know (0001_counter) and lacks some it does (0001_other)",
    );
  } finally {
    await db.destroy();
  }
});
