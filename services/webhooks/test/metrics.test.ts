import { createMetrics } from "@humanpass/telemetry";
import { sampleValue, unboundedLabels } from "@humanpass/testing";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.ts";
import { createAddressPolicy } from "../src/delivery/address-policy.ts";
import { createDeliveryMetrics } from "../src/delivery/metrics.ts";
import { ADMIN_TOKEN, type Harness, setUp } from "./harness.ts";

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
});
