import { createCloudEvent } from "@humanpass/events";
import { systemClock } from "@humanpass/service";
import { eventually } from "@humanpass/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { enqueueDeliveries } from "../src/db/deliveries.ts";
import { createAddressPolicy, createDeliveryWorker } from "../src/index.ts";
import {
  adminApp,
  auth,
  type Harness,
  logger,
  setUp,
  startReceiver,
  startStallingReceiver,
} from "./support/harness.ts";

let harness: Harness;
beforeAll(async () => {
  harness = await setUp("webhooks_stall");
});
afterAll(async () => {
  await harness?.close();
});
// Run whether the test passed or not, last registered first, so that a failure leaves nothing running.
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await harness.db.deleteFrom("endpoints").execute();
});

const SUBJECT = "agent_auth.human_verified";
const policy = createAddressPolicy(["127.0.0.1/32"]);

async function register(url: string): Promise<string> {
  const app = await adminApp(harness.db, policy, systemClock);
  const created = await app.inject({
    method: "POST",
    url: "/admin/v1/endpoints",
    headers: auth,
    payload: { url, eventTypes: [SUBJECT] },
  });
  expect(created.statusCode).toBe(201);
  await app.close();
  return created.json().id;
}

async function publish(count: number): Promise<string[]> {
  const events = Array.from({ length: count }, (_, n) =>
    createCloudEvent({
      source: "agent-auth",
      type: "human_verified",
      data: {
        humanId: String(n),
        verifiedAt: new Date().toISOString(),
        humanDid: "did:x",
        resource: "https://r.example",
      },
    }),
  );
  await harness.db.transaction().execute(async (trx) => {
    for (const event of events) await enqueueDeliveries(trx, SUBJECT, event, new Date());
  });
  return events.map((e) => e.id);
}

async function statusesOf(endpointId: string) {
  return harness.db
    .selectFrom("deliveries")
    .select(["status", "attempts", "last_error", "leased_until"])
    .where("endpoint_id", "=", endpointId)
    .execute();
}

describe("one receiver cannot stall the others", () => {
  it("a silent endpoint holds its cap of attempts while the healthy endpoint beside it gets all its deliveries", async () => {
    const silent = await startStallingReceiver("silent");
    const seen = new Set<string>();
    const healthy = await startReceiver((request) => {
      seen.add(String(request.headers["webhook-id"]));
      return 204;
    });
    const silentId = await register(silent.url);
    const healthyId = await register(healthy.url);
    const ids = await publish(40);
    const worker = createDeliveryWorker({
      db: harness.db,
      policy,
      logger,
      clock: systemClock,
      retryWindowMs: 86_400_000,
      // Longer than the test: the silent endpoint's attempts stay in flight throughout.
      attemptTimeoutMs: 120_000,
      concurrency: 8,
      endpointConcurrency: 2,
    });
    worker.start(10);
    // Cut off at the end, the silent endpoint's attempts end as failures and the worker can stop.
    cleanups.push(
      () => healthy.close(),
      () => worker.stop(),
      () => silent.close(),
    );

    await eventually(
      async () => (await statusesOf(healthyId)).filter((r) => r.status === "delivered").length === ids.length,
      30_000,
    );
    expect([...seen].sort()).toEqual([...ids].sort());
    // The silent endpoint has its two attempts open and no more; its other deliveries wait their turn.
    await eventually(() => silent.sockets().open === 2);
    expect(silent.sockets().most).toBe(2);
    const silentRows = await statusesOf(silentId);
    expect(silentRows.filter((r) => r.attempts === 1 && r.leased_until !== null)).toHaveLength(2);
    expect(silentRows.filter((r) => r.attempts === 0)).toHaveLength(ids.length - 2);
  }, 60_000);

  it("closes a trickling receiver's connections at the attempt's deadline and counts the attempt as failed", async () => {
    const trickling = await startStallingReceiver("trickle");
    const endpointId = await register(trickling.url);
    await publish(3);
    const worker = createDeliveryWorker({
      db: harness.db,
      policy,
      logger,
      clock: systemClock,
      retryWindowMs: 86_400_000,
      attemptTimeoutMs: 500,
      concurrency: 8,
      endpointConcurrency: 2,
    });
    worker.start(10);
    cleanups.push(
      () => trickling.close(),
      () => worker.stop(),
    );

    // Each attempt got headers (200) and a body that never ends: failed at the deadline, its socket closed.
    const rows = await eventually(async () => {
      const current = await statusesOf(endpointId);
      // A retry comes 10 s later at the earliest: each has had its one attempt.
      return current.every((r) => r.attempts >= 1 && r.leased_until === null) && current;
    }, 30_000);
    expect(rows.map((r) => [r.status, r.last_error])).toEqual(
      Array(3).fill(["pending", "no complete answer within 500 ms"]),
    );
    await eventually(() => trickling.sockets().open === 0);
    expect(trickling.sockets().most).toBeLessThanOrEqual(2);
  }, 60_000);
});
