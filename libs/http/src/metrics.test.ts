import { createMetrics } from "@humanpass/telemetry";
import { parseExposition, sampleValue, unboundedLabels } from "@humanpass/testing";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { createHttpApp, markClientCaused } from "./app.ts";

describe("/metrics and http.server.request.duration", () => {
  const logger = pino({ level: "silent" });
  const apps: Awaited<ReturnType<typeof createHttpApp>>[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  async function appWithMetrics() {
    const app = await createHttpApp({
      logger,
      rateLimit: false,
      metrics: createMetrics({ serviceName: "test-service" }),
    });
    app.get("/things/:id", async () => ({ ok: true }));
    app.post("/things", async () => {
      throw new Error("boom");
    });
    apps.push(app);
    return app;
  }

  it("records each request by method, route template and status, and serves it as Prometheus text", async () => {
    const app = await appWithMetrics();
    const did = "did:iden3:billions:main:2VmAkXrihYqt8bMTFmzXJ9r3Vb8F5kXwCk4uSUtBcF";
    for (const id of ["1", "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", did]) {
      expect((await app.inject({ url: `/things/${encodeURIComponent(id)}` })).statusCode).toBe(200);
    }
    expect((await app.inject({ method: "POST", url: "/things" })).statusCode).toBe(500);
    expect(
      (await app.inject({ url: "/nowhere/0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48" })).statusCode,
    ).toBe(404);
    await app.inject({ url: "/healthz" });
    await app.inject({ url: "/readyz" });

    const response = await app.inject({ url: "/metrics" });
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toContain("text/plain");
    const text = response.body;
    const count = (labels: Record<string, string>) =>
      sampleValue(text, "http_server_request_duration_count", labels);
    expect(
      count({ http_route: "/things/:id", http_request_method: "GET", http_response_status_code: "200" }),
    ).toBe(3);
    expect(
      count({ http_route: "/things", http_request_method: "POST", http_response_status_code: "500" }),
    ).toBe(1);
    // The unmatched request is counted without a route (its path would be an unbounded label).
    const unmatched = parseExposition(text).filter(
      (s) =>
        s.name === "http_server_request_duration_count" &&
        s.labels.http_response_status_code === "404" &&
        s.labels.http_route === undefined,
    );
    expect(unmatched.map((s) => s.value)).toEqual([1]);
    // Probes and scrapes are not requests anyone serves.
    for (const route of ["/healthz", "/readyz", "/metrics"])
      expect(count({ http_route: route })).toBeUndefined();
    expect(sampleValue(text, "http_server_request_duration_bucket", { le: "0.005" })).toBeDefined();
    expect(
      parseExposition(text).every(
        (s) => s.name === "target_info" || s.labels.service_name === "test-service",
      ),
    ).toBe(true);
    expect(unboundedLabels(text)).toEqual([]);
  });

  it("records error.type on 5xx: the status for a server fault, client_input for a 5xx marked as the client's doing", async () => {
    const app = await appWithMetrics();
    app.post("/tokens", async (_request, reply) =>
      markClientCaused(reply).code(500).send({ error: "The token could not be verified" }),
    );
    expect((await app.inject({ method: "POST", url: "/tokens" })).statusCode).toBe(500);
    expect((await app.inject({ method: "POST", url: "/things" })).statusCode).toBe(500);
    expect((await app.inject({ url: "/things/1" })).statusCode).toBe(200);
    const text = (await app.inject({ url: "/metrics" })).body;
    const count = (labels: Record<string, string>) =>
      sampleValue(text, "http_server_request_duration_count", labels);
    expect(
      count({ http_route: "/tokens", http_response_status_code: "500", error_type: "client_input" }),
    ).toBe(1);
    expect(count({ http_route: "/things", http_response_status_code: "500", error_type: "500" })).toBe(1);
    const ok = parseExposition(text).filter(
      (s) => s.name === "http_server_request_duration_count" && s.labels.http_route === "/things/:id",
    );
    expect(ok.map((s) => s.labels.error_type)).toEqual([undefined]);
  });

  it("labels every series with the release and the environment (service.version, deployment.environment)", async () => {
    const app = await createHttpApp({
      logger,
      rateLimit: false,
      metrics: createMetrics({
        serviceName: "test-service",
        serviceVersion: "1.4.2",
        deploymentEnvironment: "prod",
      }),
    });
    apps.push(app);
    app.get("/things/:id", async () => ({ ok: true }));
    await app.inject({ url: "/things/1" });
    const samples = parseExposition((await app.inject({ url: "/metrics" })).body).filter(
      (s) => s.name !== "target_info",
    );
    expect(samples.length).toBeGreaterThan(0);
    expect(
      samples.filter(
        (s) => s.labels.service_version !== "1.4.2" || s.labels.deployment_environment !== "prod",
      ),
    ).toEqual([]);
  });

  it("counts from zero in every app (one meter provider per app)", async () => {
    const first = await appWithMetrics();
    const second = await appWithMetrics();
    await first.inject({ url: "/things/1" });
    const text = (await second.inject({ url: "/metrics" })).body;
    expect(
      sampleValue(text, "http_server_request_duration_count", { http_route: "/things/:id" }),
    ).toBeUndefined();
  });

  it("answers /metrics as an unknown path to a request that came through a proxy (the public ingress)", async () => {
    const app = await appWithMetrics();
    for (const headers of [{ "x-forwarded-for": "203.0.113.7" }, { forwarded: "for=203.0.113.7" }]) {
      const response = await app.inject({ url: "/metrics", headers });
      expect(response.statusCode).toBe(404);
      expect(response.body).not.toContain("http_server_request_duration");
    }
  });

  it("has no /metrics without instruments", async () => {
    const app = await createHttpApp({ logger, rateLimit: false });
    apps.push(app);
    expect((await app.inject({ url: "/metrics" })).statusCode).toBe(404);
  });
});
