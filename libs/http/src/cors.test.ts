import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { createHttpApp } from "./app.ts";

describe("CORS", () => {
  const logger = pino({ level: "silent" });
  const apps: Awaited<ReturnType<typeof createHttpApp>>[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  async function appWith(corsOrigins: string[]) {
    const app = await createHttpApp({ logger, corsOrigins, rateLimit: false });
    app.get("/r", async () => ({ ok: true }));
    apps.push(app);
    return app;
  }

  const preflight = (origin: string, headers: Record<string, string> = {}) => ({
    method: "OPTIONS" as const,
    url: "/r",
    headers: { origin, "access-control-request-method": "GET", ...headers },
  });

  it("echoes a listed origin, with Vary: Origin on every answer", async () => {
    const app = await appWith(["https://app.example"]);
    const allowed = await app.inject({ url: "/r", headers: { origin: "https://app.example" } });
    expect(allowed.headers["access-control-allow-origin"]).toBe("https://app.example");
    expect(allowed.headers.vary).toBe("Origin");
    const other = await app.inject({ url: "/r", headers: { origin: "https://evil.example" } });
    expect(other.statusCode).toBe(200);
    expect(other.headers["access-control-allow-origin"]).toBeUndefined();
    expect(other.headers.vary).toBe("Origin");
    expect((await app.inject("/r")).headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("lets the page read the payment, retry and rate-limit headers", async () => {
    const app = await appWith(["https://app.example"]);
    const res = await app.inject({ url: "/r", headers: { origin: "https://app.example" } });
    expect(res.headers["access-control-expose-headers"]).toBe(
      "PAYMENT-REQUIRED, PAYMENT-RESPONSE, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset",
    );
  });

  it("answers a preflight from a listed origin with 204, the allowed methods and headers and a max age", async () => {
    const app = await appWith(["https://app.example"]);
    const ok = await app.inject(
      preflight("https://app.example", { "access-control-request-headers": "x-payment" }),
    );
    expect(ok.statusCode).toBe(204);
    expect(ok.body).toBe("");
    expect(ok.headers).toMatchObject({
      "access-control-allow-origin": "https://app.example",
      "access-control-allow-methods": "GET,HEAD,PUT,PATCH,POST,DELETE",
      "access-control-allow-headers": "x-payment",
      "access-control-max-age": "600",
      vary: "Origin, Access-Control-Request-Headers",
    });
    // Without an allowed origin in the answer, the browser refuses the call the preflight was for.
    const refused = await app.inject(preflight("https://evil.example"));
    expect(refused.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it('answers any origin with "*" when configured so', async () => {
    const app = await appWith(["*"]);
    const res = await app.inject({ url: "/r", headers: { origin: "https://anyone.example" } });
    expect(res.headers["access-control-allow-origin"]).toBe("*");
    expect(res.headers.vary).toBeUndefined();
    expect((await app.inject(preflight("https://anyone.example"))).statusCode).toBe(204);
  });

  it("sends no CORS headers when no origin is configured", async () => {
    const app = await appWith([]);
    const res = await app.inject({ url: "/r", headers: { origin: "https://app.example" } });
    expect(res.headers["access-control-allow-origin"]).toBeUndefined();
    expect(res.headers.vary).toBeUndefined();
    expect((await app.inject(preflight("https://app.example"))).statusCode).toBe(404);
  });
});
