import { createMetrics } from "@humanpass/telemetry";
import { sampleValue, unboundedLabels } from "@humanpass/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_DURABLES } from "../src/events/consumers.ts";
import {
  api,
  attestationRecorded,
  getJson,
  type Harness,
  party,
  schemaRegistered,
  startHarness,
  uniquenessVerified,
} from "./support/harness.ts";

let h: Harness;
const metrics = createMetrics({ serviceName: "attestations-api" });

beforeAll(async () => {
  h = await startHarness("att_metrics", { metrics });
});
afterAll(async () => {
  await h?.close();
  await metrics.shutdown();
});

describe("attestations-api /metrics", () => {
  it("after events and lookups: requests by route template, consumers' applied events and lag, age of the last one", async () => {
    const s = schemaRegistered();
    await h.publish("CHAIN", "schema_registered", s);
    const a = attestationRecorded(s.schemaId, party(), party());
    await h.publish("CHAIN", "attestation_recorded", a);
    await h.publish("VERIFIER", "uniqueness_verified", uniquenessVerified("4242", "99"));
    expect((await getJson(h.app, api(`/attestations/${a.attestationId}`))).status).toBe(200);
    expect((await getJson(h.app, api("/nullifier?userId=4242"))).status).toBe(200);
    expect((await getJson(h.app, api("/nullifier?userId=5151"))).status).toBe(404);

    const response = await h.app.inject({ url: "/metrics" });
    expect(response.statusCode).toBe(200);
    const text = response.body;
    const requests = (labels: Record<string, string>) =>
      sampleValue(text, "http_server_request_duration_count", labels);
    expect(requests({ http_route: "/api/v1/attestations/:id", http_response_status_code: "200" })).toBe(1);
    expect(requests({ http_route: "/api/v1/nullifier", http_response_status_code: "200" })).toBe(1);
    expect(requests({ http_route: "/api/v1/nullifier", http_response_status_code: "404" })).toBe(1);

    const chain = { consumer: DEFAULT_DURABLES.chain };
    const verifier = { consumer: DEFAULT_DURABLES.verifier };
    expect(
      sampleValue(text, "humanpass_consumer_events_applied_total", {
        ...chain,
        event_type: "attestation_recorded",
      }),
    ).toBe(1);
    expect(
      sampleValue(text, "humanpass_consumer_events_applied_total", {
        ...verifier,
        event_type: "uniqueness_verified",
      }),
    ).toBe(1);
    expect(sampleValue(text, "humanpass_consumer_apply_lag_seconds_count", chain)).toBe(2);
    expect(
      sampleValue(text, "humanpass_attestations_api_last_applied_event_age_seconds", chain),
    ).toBeGreaterThanOrEqual(0);
    expect(
      sampleValue(text, "humanpass_attestations_api_last_applied_event_age_seconds", verifier),
    ).toBeGreaterThanOrEqual(0);
    // Attestation ids, addresses, DIDs and user ids went through: none became a label.
    expect(unboundedLabels(text)).toEqual([]);
  });
});
