import { type CloudEvent, createCloudEvent, subjectOf, verifyWebhook } from "@humanpass/events";
import { eventually } from "@humanpass/testing";
import { jetstream } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAddressPolicy, createDeliveryWorker, startIngest } from "../src/index.ts";
import {
  adminApp,
  auth,
  fakeClock,
  type Harness,
  logger,
  recordedMetrics,
  setUp,
  startReceiver,
} from "./support/harness.ts";

const EVENTS = 1_000;
const MINUTE = 60_000;
let harness: Harness;

beforeAll(async () => {
  harness = await setUp("webhooks_delivery");
});
afterAll(async () => {
  await harness?.close();
});

function humanVerified(n: number): CloudEvent {
  return createCloudEvent({
    source: "agent-auth",
    type: "human_verified",
    data: {
      humanId: String(n),
      verifiedAt: "2026-11-26T00:00:00.000Z",
      humanDid: `did:iden3:billions:main:h${n}`,
      resource: "https://api.example.com/weather",
    },
  });
}

describe("delivering 1,000 events to an endpoint that fails 30 % of requests and is down for 10 minutes", () => {
  it("delivers each one, and the receiver deduping on webhook-id accepts each exactly once", async () => {
    const { db, nats, topology } = harness;
    const time = fakeClock();
    const policy = createAddressPolicy(["127.0.0.1/32"]);
    const app = await adminApp(db, policy, time.clock);

    // Down from minute 1 to minute 11 of fake time; otherwise 15 % fail before and 15 % after accepting the event
    // (the answer is lost, so the same webhook-id comes again).
    const downFrom = MINUTE;
    const downUntil = 11 * MINUTE;
    let secret = "";
    const accepted = new Map<string, number>();
    const seen = { requests: 0, whileDown: 0, failedBefore: 0, failedAfter: 0, duplicates: 0, refused: 0 };
    const receiver = await startReceiver((request, body) => {
      seen.requests++;
      const elapsed = time.elapsedMs();
      if (elapsed >= downFrom && elapsed < downUntil) {
        seen.whileDown++;
        return "drop";
      }
      const roll = Math.random();
      if (roll < 0.15) {
        seen.failedBefore++;
        return 503;
      }
      let id: string;
      try {
        id = verifyWebhook(body, request.headers, { secret, now: time.now() }).id;
      } catch {
        seen.refused++;
        return 400;
      }
      if (accepted.has(id)) seen.duplicates++;
      else accepted.set(id, 1);
      if (roll < 0.3) {
        seen.failedAfter++;
        return 500;
      }
      return 204;
    });

    const registered = await app.inject({
      method: "POST",
      url: "/admin/v1/endpoints",
      headers: auth,
      payload: { url: receiver.url, eventTypes: ["agent_auth.human_verified"] },
    });
    expect(registered.statusCode).toBe(201);
    secret = registered.json().secret;

    const consumers = await startIngest({ db, nats, topology, logger, clock: time.clock });
    const published: string[] = [];
    const js = jetstream(nats);
    for (let start = 0; start < EVENTS; start += 100) {
      const batch = Array.from({ length: 100 }, (_, i) => humanVerified(start + i));
      await Promise.all(
        batch.map((event) =>
          js.publish(subjectOf(topology, "AGENT_AUTH", "human_verified"), JSON.stringify(event), {
            msgID: event.id,
          }),
        ),
      );
      published.push(...batch.map((e) => e.id));
    }
    // Another type on the same stream: the endpoint did not ask for it.
    await js.publish(
      subjectOf(topology, "AGENT_AUTH", "human_not_registered"),
      JSON.stringify(
        createCloudEvent({
          source: "agent-auth",
          type: "human_not_registered",
          data: { did: "d", resource: "r" },
        }),
      ),
    );
    const queued = async () =>
      Number(
        (
          await db
            .selectFrom("deliveries")
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    await eventually(async () => (await queued()) === EVENTS, 60_000);
    await Promise.all(consumers.map((c) => c.stop()));

    const recorded = recordedMetrics();
    const worker = createDeliveryWorker({
      db,
      policy,
      logger,
      clock: time.clock,
      retryWindowMs: 25 * 60 * MINUTE,
      attemptTimeoutMs: 5_000,
      concurrency: 100,
      endpointConcurrency: 100,
      metrics: recorded.metrics,
    });
    // Each round attempts what is due, then fake time moves on by 10 s, or to the next due attempt when idle.
    for (let round = 0; round < 5_000; round++) {
      const attempted = await worker.runOnce();
      const next = await db
        .selectFrom("deliveries")
        .select((eb) => eb.fn.min("next_attempt_at").as("at"))
        .where("status", "=", "pending")
        .executeTakeFirstOrThrow();
      if (!next.at) break;
      if (attempted > 0) time.advance(10_000);
      else time.set(new Date(next.at as Date));
    }
    await receiver.close();

    const byStatus = await db
      .selectFrom("deliveries")
      .select(["status", (eb) => eb.fn.countAll().as("n")])
      .groupBy("status")
      .execute();
    expect(byStatus.map((r) => [r.status, Number(r.n)])).toEqual([["delivered", EVENTS]]);
    expect([...accepted.keys()].sort()).toEqual([...published].sort());
    expect([...accepted.values()].every((n) => n === 1)).toBe(true);
    // The failures happened: the outage was met, answers were lost after acceptance and redelivered.
    expect(seen.whileDown).toBeGreaterThan(0);
    expect(seen.failedBefore).toBeGreaterThan(0);
    expect(seen.duplicates).toBe(seen.failedAfter);
    expect(seen.refused).toBe(0);
    expect(time.elapsedMs()).toBeGreaterThan(downUntil);
    // The counters tell the same story: every request the receiver saw was one attempt.
    expect(await recorded.totals()).toEqual({
      "humanpass.webhooks.attempts{delivered}": EVENTS,
      "humanpass.webhooks.attempts{failed}": seen.requests - EVENTS,
      "humanpass.webhooks.retries": seen.requests - EVENTS,
    });
  }, 300_000);
});
