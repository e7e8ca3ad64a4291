import { createCloudEvent } from "@humanpass/events";
import { createMetrics } from "@humanpass/telemetry";
import { sampleValue, unboundedLabels } from "@humanpass/testing";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.ts";
import { enqueueDeliveries } from "../src/db/deliveries.ts";
import { createAddressPolicy } from "../src/delivery/address-policy.ts";
import { createDeliveryMetrics, observeDeliveries } from "../src/delivery/metrics.ts";
import { ADMIN_TOKEN, type Harness, setUp } from "./support/harness.ts";

let h: Harness;
const metrics = createMetrics({ serviceName: "webhooks" });

beforeAll(async () => {
  h = await setUp("webhooks_metrics");
});
afterAll(async () => {
  await h?.close();
  await metrics.shutdown();
});

describe("webhooks /metrics", () => {
  it("serves the admin API's requests by route template and the delivery counters of the service's meter", async () => {
    const app = await buildApp({
      logger: pino({ level: "silent" }),
      db: h.db,
      policy: createAddressPolicy([]),
      adminToken: ADMIN_TOKEN,
      metrics,
    });
    const delivery = createDeliveryMetrics(metrics.meter);
    delivery.attempts.add(1, { outcome: "delivered" });
    const listed = await app.inject({
      url: "/admin/v1/endpoints",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(listed.statusCode).toBe(200);

    const text = (await app.inject({ url: "/metrics" })).body;
    expect(
      sampleValue(text, "http_server_request_duration_count", {
        http_route: "/admin/v1/endpoints",
        http_response_status_code: "200",
      }),
    ).toBe(1);
    expect(sampleValue(text, "humanpass_webhooks_attempts_total", { outcome: "delivered" })).toBe(1);
    expect(unboundedLabels(text)).toEqual([]);
    await app.close();
  });

  it("exports the failure counters at 0 from the start, and the backlog of pending deliveries by state", async () => {
    const own = createMetrics({ serviceName: "webhooks" });
    createDeliveryMetrics(own.meter);
    observeDeliveries(own.meter, h.db, 2);
    const app = await buildApp({
      logger: pino({ level: "silent" }),
      db: h.db,
      policy: createAddressPolicy([]),
      adminToken: ADMIN_TOKEN,
      metrics: own,
    });
    const scrape = async () => (await app.inject({ url: "/metrics" })).body;
    let text = await scrape();
    for (const outcome of ["delivered", "failed", "refused"])
      expect(sampleValue(text, "humanpass_webhooks_attempts_total", { outcome })).toBe(0);
    expect(sampleValue(text, "humanpass_webhooks_retries_total", {})).toBe(0);
    expect(sampleValue(text, "humanpass_webhooks_dead_letters_total", {})).toBe(0);
    expect(sampleValue(text, "humanpass_webhooks_pending_deliveries", { state: "new" })).toBe(0);
    expect(sampleValue(text, "humanpass_webhooks_oldest_pending_delivery_age_seconds", {})).toBe(0);
    expect(sampleValue(text, "humanpass_webhooks_attempts_in_flight", {})).toBe(0);
    expect(sampleValue(text, "humanpass_webhooks_saturated_endpoints", {})).toBe(0);

    await h.db
      .insertInto("endpoints")
      .values({
        url: "https://hooks.example.com/in",
        event_types: ["agent_auth.human_verified"],
        secrets: ["whsec_test"],
        created_at: new Date(),
      })
      .execute();
    const firstDue = new Date(Date.now() - 90_000);
    for (const attempts of [0, 0, 3]) {
      const event = createCloudEvent({
        source: "agent-auth",
        type: "human_verified",
        data: {
          humanId: "7",
          verifiedAt: firstDue.toISOString(),
          humanDid: "did:x",
          resource: "https://r.example",
        },
      });
      await h.db
        .transaction()
        .execute((trx) => enqueueDeliveries(trx, "agent_auth.human_verified", event, firstDue));
      await h.db.updateTable("deliveries").set({ attempts }).where("event_id", "=", event.id).execute();
    }
    text = await scrape();
    expect(sampleValue(text, "humanpass_webhooks_pending_deliveries", { state: "new" })).toBe(2);
    expect(sampleValue(text, "humanpass_webhooks_pending_deliveries", { state: "retrying" })).toBe(1);
    expect(
      sampleValue(text, "humanpass_webhooks_oldest_pending_delivery_age_seconds", {}),
    ).toBeGreaterThanOrEqual(90);
    expect(sampleValue(text, "humanpass_webhooks_saturated_endpoints", {})).toBe(0);
    // Two attempts in flight at the endpoint: as many as the cap of 2 allows.
    await h.db
      .updateTable("deliveries")
      .set({ leased_until: new Date(Date.now() + 60_000) })
      .where("attempts", "=", 0)
      .execute();
    text = await scrape();
    expect(sampleValue(text, "humanpass_webhooks_saturated_endpoints", {})).toBe(1);
    await app.close();
    await own.shutdown();
  });
});
