import { createDb, type Kysely, migrateToLatest } from "@humanpass/db";
import { createTestDatabase, type TestDatabase } from "@humanpass/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA } from "../src/config";
import { migrations } from "../src/db/migrations";
import { PostgresNonceStore } from "../src/db/nonce-store";
import type { Database } from "../src/db/types";
import { PostgresHumanUsageStorage } from "../src/db/usage-storage";

let database: TestDatabase;
let dbs: Kysely<Database>[];
let storages: PostgresHumanUsageStorage[];

beforeAll(async () => {
  database = await createTestDatabase("pg_usage");
  // Two pools stand for two gateway instances.
  dbs = [0, 1].map(() => createDb<Database>({ connectionString: database.url, schema: SCHEMA, max: 20 }));
  await migrateToLatest(dbs[0], { schema: SCHEMA, migrations });
  storages = dbs.map((db) => new PostgresHumanUsageStorage(db));
});

afterAll(async () => {
  await Promise.all((dbs ?? []).map((db) => db.destroy()));
  await database?.drop();
});

describe("PostgresHumanUsageStorage", () => {
  it("lets exactly maxUse of 200 concurrent increments through, across two pools", async () => {
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => storages[i % 2].incrementIfBelow("human-a", 5, "weather")),
    );
    const granted = results.filter((r) => r !== null).sort();
    expect(granted).toEqual([1, 2, 3, 4, 5]);
    expect(results.filter((r) => r === null)).toHaveLength(195);
    expect(await storages[0].count("human-a", "weather")).toBe(5);
  });

  it("decrements to zero and no further, even when 200 decrements race", async () => {
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => storages[i % 2].decrementIfAboveZero("human-a", "weather")),
    );
    expect(results.filter((r) => r !== null).sort()).toEqual([0, 1, 2, 3, 4]);
    expect(await storages[1].count("human-a", "weather")).toBe(0);
    expect(await storages[0].decrementIfAboveZero("human-a", "weather")).toBeNull();
  });

  it("gives a use back after a decrement, up to the cap again", async () => {
    const s = storages[0];
    expect(await s.incrementIfBelow("human-b", 2, "x")).toBe(1);
    expect(await s.incrementIfBelow("human-b", 2, "x")).toBe(2);
    expect(await s.incrementIfBelow("human-b", 2, "x")).toBeNull();
    expect(await s.decrementIfAboveZero("human-b", "x")).toBe(1);
    expect(await s.incrementIfBelow("human-b", 2, "x")).toBe(2);
  });

  it("counts each (human, scope) pair on its own", async () => {
    const s = storages[1];
    expect(await s.incrementIfBelow("human-c", 1, "one")).toBe(1);
    expect(await s.incrementIfBelow("human-c", 1, "two")).toBe(1);
    expect(await s.incrementIfBelow("human-d", 1, "one")).toBe(1);
    expect(await s.incrementIfBelow("human-c", 1, "one")).toBeNull();
  });

  it("never starts a counter for a cap below 1, and decrementing an unknown pair changes nothing", async () => {
    expect(await storages[0].incrementIfBelow("human-e", 0, "s")).toBeNull();
    expect(await storages[0].count("human-e", "s")).toBe(0);
    expect(await storages[0].decrementIfAboveZero("nobody", "s")).toBeNull();
  });
});

describe("PostgresNonceStore", () => {
  it("accepts a nonce once, even when two instances race for it", async () => {
    const stores = dbs.map((db) => new PostgresNonceStore(db));
    const until = new Date(Date.now() + 60_000);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => stores[i % 2].consume("nonce-1", until)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await stores[0].consume("nonce-2", until)).toBe(true);
  });

  it("forgets nonces whose proofs have expired", async () => {
    const store = new PostgresNonceStore(dbs[0], 0);
    expect(await store.consume("old-nonce", new Date(Date.now() - 1_000))).toBe(true);
    await store.consume("another", new Date(Date.now() + 60_000));
    const rows = await dbs[0]
      .selectFrom("used_proof_nonces")
      .select("nonce")
      .where("nonce", "=", "old-nonce")
      .execute();
    expect(rows).toEqual([]);
  });
});
