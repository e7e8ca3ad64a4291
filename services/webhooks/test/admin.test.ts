import { createCloudEvent, verifyWebhook, WebhookVerificationError } from "@humanpass/events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueueDeliveries } from "../src/db/deliveries.ts";
import { createAddressPolicy, createDeliveryWorker } from "../src/index.ts";
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

let harness: Harness;
beforeAll(async () => {
  harness = await setUp("webhooks_admin");
});
afterAll(async () => {
  await harness?.close();
});

const event = () =>
  createCloudEvent({
    source: "agent-auth",
    type: "human_verified",
    data: {
      humanId: "7",
      verifiedAt: "2026-11-26T00:00:00.000Z",
      humanDid: "did:x",
      resource: "https://r.example",
    },
  });

async function enqueue(now: Date) {
  const e = event();
  await harness.db
    .transaction()
    .execute((trx) => enqueueDeliveries(trx, "agent_auth.human_verified", e, now));
  return e;
}

describe("the admin API", () => {
  it("answers 401 without the admin token or with a wrong one", async () => {
    const app = await adminApp(harness.db, createAddressPolicy([]), fakeClock().clock);
    expect((await app.inject({ method: "GET", url: "/admin/v1/endpoints" })).statusCode).toBe(401);
    const wrong = await app.inject({
      method: "GET",
      url: "/admin/v1/endpoints",
      headers: { authorization: "Bearer nope" },
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toMatchObject({ error: "unauthorized" });
  });

  it("documents itself in OpenAPI, every admin route behind the bearer scheme", async () => {
    const app = await adminApp(harness.db, createAddressPolicy([]), fakeClock().clock);
    const response = await app.inject({ method: "GET", url: "/docs/json" });
    expect(response.statusCode).toBe(200);
    const spec = response.json();
    expect(spec.components.securitySchemes.adminToken).toMatchObject({ type: "http", scheme: "bearer" });
    const admin = Object.entries<Record<string, { security?: unknown }>>(spec.paths).filter(([path]) =>
      path.startsWith("/admin/"),
    );
    expect(admin.length).toBeGreaterThanOrEqual(5);
    for (const [path, methods] of admin)
      for (const [method, operation] of Object.entries(methods))
        expect({ path, method, security: operation.security }).toEqual({
          path,
          method,
          security: [{ adminToken: [] }],
        });
  });

  it("refuses endpoints at loopback, private, link-local and metadata addresses, in any IPv6 form, and unknown event types", async () => {
    const app = await adminApp(harness.db, createAddressPolicy([]), fakeClock().clock);
    for (const url of [
      "http://127.0.0.1:8080/hook",
      "https://127.0.0.1/hook",
      "https://10.1.2.3/hook",
      "https://192.168.1.1/hook",
      "https://169.254.169.254/latest",
      "https://[::1]/hook",
      "https://localhost/hook",
      "https://[::127.0.0.1]/hook",
      "https://[::ffff:0:10.0.0.1]/hook",
      "https://[64:ff9b::192.168.0.1]/hook",
      "https://[64:ff9b:1::a00:1]/hook",
      "https://[2002:a9fe:a9fe::]/hook",
      "https://[2001:0:a00:1::f7f7:f7f7]/hook",
      "https://[fec0::1]/hook",
      "https://[fd00:ec2::254]/latest",
    ]) {
      const response = await app.inject({
        method: "POST",
        url: "/admin/v1/endpoints",
        headers: auth,
        payload: { url, eventTypes: ["agent_auth.human_verified"] },
      });
      expect([url, response.statusCode, response.json().error]).toEqual([
        url,
        422,
        "endpoint_address_refused",
      ]);
    }
    const unknownType = await app.inject({
      method: "POST",
      url: "/admin/v1/endpoints",
      headers: auth,
      payload: { url: "https://hooks.example.com/", eventTypes: ["agent_auth.nope"] },
    });
    expect(unknownType.statusCode).toBe(400);
    expect((await app.inject({ method: "GET", url: "/admin/v1/endpoints", headers: auth })).json()).toEqual(
      [],
    );
  });

  it("checks the address again at delivery: an endpoint now resolving to a refused address gets nothing", async () => {
    const time = fakeClock();
    let requests = 0;
    const receiver = await startReceiver(() => {
      requests++;
      return 204;
    });
    const app = await adminApp(harness.db, createAddressPolicy(["127.0.0.1/32"]), time.clock);
    const created = await app.inject({
      method: "POST",
      url: "/admin/v1/endpoints",
      headers: auth,
      payload: { url: receiver.url, eventTypes: ["agent_auth.human_verified"] },
    });
    expect(created.statusCode).toBe(201);
    const e = await enqueue(time.now());
    const recorded = recordedMetrics();
    const strict = createDeliveryWorker({
      db: harness.db,
      policy: createAddressPolicy([]),
      logger,
      clock: time.clock,
      retryWindowMs: 86_400_000,
      attemptTimeoutMs: 2_000,
      concurrency: 10,
      endpointConcurrency: 10,
      metrics: recorded.metrics,
    });
    expect(await strict.runOnce()).toBe(1);
    const row = await harness.db
      .selectFrom("deliveries")
      .selectAll()
      .where("event_id", "=", e.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe("pending");
    expect(row.last_error).toMatch(/127\.0\.0\.1 is not a public address/);
    expect(requests).toBe(0);
    expect(await recorded.totals()).toEqual({
      "humanpass.webhooks.attempts{refused}": 1,
      "humanpass.webhooks.retries": 1,
    });
    await app.inject({ method: "DELETE", url: `/admin/v1/endpoints/${created.json().id}`, headers: auth });
    await receiver.close();
  });

  it("rotates secrets without a gap, dead-letters after the retry window, and replays dead letters", async () => {
    const time = fakeClock();
    const verified: { id: string; secrets: string[] }[] = [];
    let secrets: string[] = [];
    let up = false;
    const receiver = await startReceiver((request, body) => {
      if (!up) return 503;
      const ok = secrets.filter((secret) => {
        try {
          verifyWebhook(body, request.headers, { secret, now: time.now() });
          return true;
        } catch (e) {
          if (e instanceof WebhookVerificationError) return false;
          throw e;
        }
      });
      verified.push({ id: String(request.headers["webhook-id"]), secrets: ok });
      return 204;
    });
    const policy = createAddressPolicy(["127.0.0.1/32"]);
    const app = await adminApp(harness.db, policy, time.clock);
    const created = (
      await app.inject({
        method: "POST",
        url: "/admin/v1/endpoints",
        headers: auth,
        payload: { url: receiver.url, eventTypes: ["agent_auth.human_verified"] },
      })
    ).json();
    const recorded = recordedMetrics();
    const worker = createDeliveryWorker({
      db: harness.db,
      policy,
      logger,
      clock: time.clock,
      retryWindowMs: 86_400_000,
      attemptTimeoutMs: 2_000,
      concurrency: 10,
      endpointConcurrency: 10,
      metrics: recorded.metrics,
    });

    // Down for longer than the retry window: the delivery ends as a dead letter after about a day of attempts.
    const lost = await enqueue(time.now());
    let attempts = 0;
    for (; attempts < 100; attempts++) {
      time.advance(3_600_000);
      await worker.runOnce();
      const dead = await app.inject({
        method: "GET",
        url: `/admin/v1/endpoints/${created.id}/dead-letters`,
        headers: auth,
      });
      if (dead.json().length > 0) {
        expect(dead.json()).toEqual([expect.objectContaining({ eventId: lost.id, lastError: "HTTP 503" })]);
        break;
      }
    }
    expect(attempts).toBeGreaterThanOrEqual(23);
    expect(attempts).toBeLessThan(30);
    expect(await recorded.totals()).toMatchObject({
      "humanpass.webhooks.attempts{failed}": expect.any(Number),
      "humanpass.webhooks.dead_letters": 1,
    });

    up = true;
    const rotated = await app.inject({
      method: "POST",
      url: `/admin/v1/endpoints/${created.id}/secrets`,
      headers: auth,
    });
    expect(rotated.statusCode).toBe(201);
    secrets = [created.secret, rotated.json().secret];
    const replay = await app.inject({
      method: "POST",
      url: `/admin/v1/endpoints/${created.id}/dead-letters/replay`,
      headers: auth,
      payload: {},
    });
    expect(replay.json()).toEqual({ replayed: [lost.id] });
    await worker.runOnce();
    expect(verified).toEqual([{ id: lost.id, secrets: [created.secret, rotated.json().secret] }]);

    const retired = await app.inject({
      method: "DELETE",
      url: `/admin/v1/endpoints/${created.id}/secrets/previous`,
      headers: auth,
    });
    expect(retired.statusCode).toBe(204);
    const next = await enqueue(time.now());
    await worker.runOnce();
    expect(verified[1]).toEqual({ id: next.id, secrets: [rotated.json().secret] });
    await receiver.close();
  });
});
