import { createPool, type Kysely, kyselyOn, migrateToLatest, type Pool } from "@humanpass/db";
import { DUPLICATE_PAYMENT, type HumanProofEvent, type ProofAdmission } from "@humanpass/human-proof";
import { createTestDatabase, TcpProxy, type TestDatabase, testTopology } from "@humanpass/testing";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA } from "../src/config.ts";
import { humanProofPurgeJob } from "../src/db/expiry-purge.ts";
import { GatewayHumanProofStore } from "../src/db/human-proof-store.ts";
import { migrations } from "../src/db/migrations/index.ts";
import type { Database } from "../src/db/types.ts";

let database: TestDatabase;
let pools: Pool[];
let dbs: Kysely<Database>[];

beforeAll(async () => {
  database = await createTestDatabase("pg_usage");
  // Two pools stand for two gateway instances.
  pools = [0, 1].map(() => createPool({ connectionString: database.url, schema: SCHEMA, max: 20 }));
  dbs = pools.map((pool) => kyselyOn<Database>(pool));
  await migrateToLatest(dbs[0], { schema: SCHEMA, migrations });
});

afterAll(async () => {
  await Promise.all((dbs ?? []).map((db) => db.destroy()));
  await database?.drop();
});

describe("GatewayHumanProofStore", () => {
  const topology = testTopology();
  const logger = pino({ level: "silent" });
  // Two stores on two pools stand for two gateway instances.
  const admissions = () => pools.map((pool) => new GatewayHumanProofStore(pool, topology, logger));
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
    expect(await admissions()[0].count("502", "burst")).toBe(5);
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
    expect(await admissions()[0].count("503", "s")).toBe(1);
    expect((await outbox("503")).map((e) => e.type)).toEqual(["human_verified"]);
  });

  it("claims an admitted proof's payment in the same statement, once across instances, each copy's events kept", async () => {
    const stores = admissions();
    const copy = {
      payload: {
        x402Version: 2,
        payload: { authorization: { from: "0xPayer", nonce: "0xAA", validBefore: "4000000000" } },
      },
      requirements: { network: "eip155:45056", asset: "0xToken" },
    } as unknown as NonNullable<ProofAdmission["payment"]>;

    // Ten copies of one payment, each with a proof of its own: one claims it, the others are refused.
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        stores[i % 2].admit({ ...admission(`copy-${i}`, "505", { maxUse: 100, scope: "c" }), payment: copy }),
      ),
    );
    expect(results.filter((r) => !r.paymentRefusal)).toHaveLength(1);
    expect(results.filter((r) => r.paymentRefusal === DUPLICATE_PAYMENT)).toHaveLength(9);
    const winner = `copy-${results.findIndex((r) => !r.paymentRefusal)}`;
    const claims = await dbs[0]
      .selectFrom("payment_reservations")
      .selectAll()
      .where("nonce", "=", "0xaa")
      .execute();
    expect(claims.map((row) => [row.network, row.asset, row.payer, row.claimed_by])).toEqual([
      ["eip155:45056", "0xtoken", "0xpayer", winner],
    ]);
    // Its events are recorded as for any verified proof; the hook gives the copies' uses back.
    expect((await outbox("505")).filter((e) => e.type === "human_verified")).toHaveLength(10);
  });

  it("forgets nonces whose proofs have expired", async () => {
    const store = new GatewayHumanProofStore(pools[0], topology, logger);
    await store.admit({ ...admission("old-nonce", "504"), nonceExpiresAt: new Date(Date.now() - 1_000) });
    await store.admit(admission("another", "504"));
    expect(await humanProofPurgeJob(store).deleteBatch(5_000)).toBeGreaterThanOrEqual(1);
    const left = await dbs[0].selectFrom("used_proof_nonces").select("nonce").execute();
    expect(left.map((row) => row.nonce)).toContain("another");
    expect(left.map((row) => row.nonce)).not.toContain("old-nonce");
  });

  it("logs at error level, and rethrows, when the nonce and usage cannot be stored", async () => {
    const lines: Array<{ level: number; msg: string; databaseUnavailable?: boolean }> = [];
    const capturing = pino({ level: "info" }, {
      write: (line: string) => void lines.push(JSON.parse(line)),
    } as unknown as pino.DestinationStream);
    const proxy = await TcpProxy.forUrl(database.url).start();
    const pool = createPool({ connectionString: proxy.url(database.url), schema: SCHEMA, max: 1 });
    try {
      const store = new GatewayHumanProofStore(pool, topology, capturing);
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
