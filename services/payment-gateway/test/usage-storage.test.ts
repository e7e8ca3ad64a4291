import { createPool, type Kysely, kyselyOn, migrateToLatest, type Pool } from "@humanpass/db";
import type { HumanProofEvent, ProofAdmission } from "@humanpass/human-proof";
import {
  createTestDatabase,
  eventually,
  TcpProxy,
  type TestDatabase,
  testTopology,
} from "@humanpass/testing";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA } from "../src/config.ts";
import { migrations } from "../src/db/migrations/index.ts";
import { PostgresPaymentReservations } from "../src/db/payment-reservations.ts";
import { PostgresProofAdmissions } from "../src/db/proof-admissions.ts";
import type { Database } from "../src/db/types.ts";
import { PostgresHumanUsageStorage } from "../src/db/usage-storage.ts";
import { DUPLICATE_PAYMENT } from "../src/x402/reserve-authorization.ts";

let database: TestDatabase;
let pools: Pool[];
let dbs: Kysely<Database>[];
let storages: PostgresHumanUsageStorage[];

beforeAll(async () => {
  database = await createTestDatabase("pg_usage");
  // Two pools stand for two gateway instances.
  pools = [0, 1].map(() => createPool({ connectionString: database.url, schema: SCHEMA, max: 20 }));
  dbs = pools.map((pool) => kyselyOn<Database>(pool));
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

describe("PostgresProofAdmissions", () => {
  const topology = testTopology();
  const logger = pino({ level: "silent" });
  const admissions = () => pools.map((pool) => new PostgresProofAdmissions(pool, topology, logger));
  const verified = (humanId: string): HumanProofEvent => ({
    type: "human_verified",
    resource: "http://gw/r",
    humanId,
    verifiedAt: new Date().toISOString(),
    attestationId: `0x${"01".repeat(32)}`,
    humanDid: "did:iden3:billions:main:human",
    humanAddress: "0x0000000000000000000000000000000000000001",
    agentDid: "did:iden3:billions:main:agent",
    agentAddress: "0x0000000000000000000000000000000000000002",
  });
  const admission = (nonce: string, humanId: string, use?: { maxUse: number; scope: string }) => ({
    nonce,
    nonceExpiresAt: new Date(Date.now() + 60_000),
    resource: "http://gw/r",
    events: [verified(humanId)],
    ...(use ? { use: { humanId, ...use } } : {}),
  });
  const outbox = async (humanId: string) => {
    const rows = await dbs[0].selectFrom("outbox").select("event").execute();
    return rows
      .map((r) => r.event as { type: string; data: Record<string, unknown> })
      .filter((e) => e.data.humanId === humanId);
  };

  it("accepts a nonce once, even when two instances race for it, and records its events once", async () => {
    const stores = admissions();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => stores[i % 2].admit(admission("nonce-1", "501"))),
    );
    expect(results.filter((r) => r.nonceFresh)).toEqual([{ nonceFresh: true, count: null }]);
    expect((await outbox("501")).map((e) => e.type)).toEqual(["human_verified"]);
  });

  it("takes exactly maxUse of 200 concurrent admissions of one human over two instances, each event with it", async () => {
    const stores = admissions();
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        stores[i % 2].admit(admission(`burst-${i}`, "502", { maxUse: 5, scope: "burst" })),
      ),
    );
    expect(results.every((r) => r.nonceFresh)).toBe(true);
    expect(
      results
        .map((r) => r.count)
        .filter((c) => c !== null)
        .sort(),
    ).toEqual([1, 2, 3, 4, 5]);
    expect(await storages[0].count("502", "burst")).toBe(5);
    const events = await outbox("502");
    expect(events.filter((e) => e.type === "human_verified")).toHaveLength(200);
    const exceeded = events.filter((e) => e.type === "max_use_exceeded");
    expect(exceeded).toHaveLength(195);
    expect(exceeded[0]?.data).toEqual({ humanId: "502", maxUse: 5, resource: "http://gw/r", scope: "burst" });
  });

  it("takes no use and records nothing for a nonce used before", async () => {
    const [store] = admissions();
    expect(await store.admit(admission("nonce-3", "503", { maxUse: 2, scope: "s" }))).toEqual({
      nonceFresh: true,
      count: 1,
    });
    expect(await store.admit(admission("nonce-3", "503", { maxUse: 2, scope: "s" }))).toEqual({
      nonceFresh: false,
      count: null,
    });
    expect(await storages[0].count("503", "s")).toBe(1);
    expect((await outbox("503")).map((e) => e.type)).toEqual(["human_verified"]);
  });

  it("claims an admitted proof's payment in the same statement: once across instances, never at the cap", async () => {
    const reservations = dbs.map((db) => new PostgresPaymentReservations(db, logger));
    const stores = pools.map(
      (pool, i) => new PostgresProofAdmissions(pool, topology, logger, { reservations: reservations[i] }),
    );
    const payment = (nonce: string) =>
      ({
        payload: {
          x402Version: 2,
          payload: { authorization: { from: "0xPayer", nonce, validBefore: "4000000000" } },
        },
        requirements: { network: "eip155:45056", asset: "0xToken" },
      }) as unknown as NonNullable<ProofAdmission["payment"]>;
    const claims = async (nonce: string) =>
      (await dbs[0].selectFrom("payment_reservations").selectAll().where("nonce", "=", nonce).execute()).map(
        (row) => [row.network, row.asset, row.payer, row.expires_at.getTime()],
      );

    // Ten copies of one payment, each with a proof of its own: one claims it, the others are refused.
    const copy = payment("0xAA");
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        stores[i % 2].admit({ ...admission(`copy-${i}`, "505", { maxUse: 100, scope: "c" }), payment: copy }),
      ),
    );
    expect(results.filter((r) => !r.paymentRefusal)).toHaveLength(1);
    expect(results.filter((r) => r.paymentRefusal === DUPLICATE_PAYMENT)).toHaveLength(9);
    expect(await claims("0xaa")).toEqual([["eip155:45056", "0xtoken", "0xpayer", 4_000_000_000_000]]);
    expect(reservations.filter((r) => r.claimedWithAdmission(copy.payload))).toHaveLength(1);
    // Its events are recorded as for any verified proof; the hook gives the copies' uses back.
    expect((await outbox("505")).filter((e) => e.type === "human_verified")).toHaveLength(10);

    // At the cap the payment is refused for the quota, and claims nothing.
    const capped = payment("0xBB");
    await stores[0].admit({
      ...admission("cap-1", "506", { maxUse: 1, scope: "c" }),
      payment: payment("0xB0"),
    });
    expect(
      await stores[0].admit({ ...admission("cap-2", "506", { maxUse: 1, scope: "c" }), payment: capped }),
    ).toEqual({ nonceFresh: true, count: null });
    expect(await claims("0xbb")).toEqual([]);
    // A replayed proof claims nothing either; a released claim can be taken again.
    expect(await stores[0].admit({ ...admission("cap-1", "506"), payment: capped })).toEqual({
      nonceFresh: false,
      count: null,
    });
    expect(await claims("0xbb")).toEqual([]);
    await reservations[0].release({
      network: "eip155:45056",
      asset: "0xtoken",
      payer: "0xpayer",
      nonce: "0xaa",
      expiresAt: new Date(),
    });
    expect(await claims("0xaa")).toEqual([]);
    expect(
      (await stores[1].admit({ ...admission("again", "505"), payment: copy })).paymentRefusal,
    ).toBeUndefined();
  });

  it("forgets nonces whose proofs have expired", async () => {
    const store = new PostgresProofAdmissions(pools[0], topology, logger, { purgeIntervalMs: 0 });
    await store.admit({ ...admission("old-nonce", "504"), nonceExpiresAt: new Date(Date.now() - 1_000) });
    await store.admit(admission("another", "504"));
    await eventually(async () => {
      const rows = await dbs[0]
        .selectFrom("used_proof_nonces")
        .select("nonce")
        .where("nonce", "=", "old-nonce")
        .execute();
      return rows.length === 0;
    });
  });

  it("logs at error level, and rethrows, when the nonce and usage cannot be stored", async () => {
    const lines: Array<{ level: number; msg: string; databaseUnavailable?: boolean }> = [];
    const capturing = pino({ level: "info" }, {
      write: (line: string) => void lines.push(JSON.parse(line)),
    } as unknown as pino.DestinationStream);
    const proxy = await TcpProxy.forUrl(database.url).start();
    const pool = createPool({ connectionString: proxy.url(database.url), schema: SCHEMA, max: 1 });
    try {
      const store = new PostgresProofAdmissions(pool, topology, capturing);
      proxy.cut();
      await expect(store.admit(admission("n-down", "h-down"))).rejects.toThrow();
      expect(lines.filter((l) => l.msg.startsWith("human proof"))).toEqual([
        expect.objectContaining({
          level: 50,
          msg: "human proof not admitted: its nonce and usage could not be stored",
          databaseUnavailable: true,
        }),
      ]);
    } finally {
      await pool.end();
      await proxy.stop();
    }
  });
});
