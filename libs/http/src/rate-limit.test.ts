import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { createHttpApp } from "./app.ts";
import type { RateLimitOptions } from "./rate-limit.ts";

describe("rate limiting", () => {
  const logger = pino({ level: "silent" });
  const apps: Awaited<ReturnType<typeof createHttpApp>>[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  async function appWith(rateLimit: RateLimitOptions) {
    const app = await createHttpApp({ logger, rateLimit, corsOrigins: ["https://app.example"] });
    app.get("/r", async () => ({ ok: true }));
    app.get("/free", async () => ({ ok: true }));
    apps.push(app);
    return app;
  }

  it("counts down in headers, then answers 429 with Retry-After and CORS headers", async () => {
    const app = await appWith({ max: 2, timeWindowMs: 60_000 });
    const call = () =>
      app.inject({ url: "/r?x=1", remoteAddress: "10.1.1.1", headers: { origin: "https://app.example" } });
    const first = await call();
    expect(first.statusCode).toBe(200);
    expect(first.headers).toMatchObject({
      "x-ratelimit-limit": "2",
      "x-ratelimit-remaining": "1",
      "x-ratelimit-reset": "60",
    });
    expect((await call()).headers["x-ratelimit-remaining"]).toBe("0");
    const limited = await call();
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({
      error: "rate_limited",
      message: "Rate limit exceeded: 2 requests per minute; retry in 60 s",
    });
    expect(limited.headers).toMatchObject({
      "retry-after": "60",
      "x-ratelimit-remaining": "0",
      "access-control-allow-origin": "https://app.example",
      "access-control-expose-headers": expect.stringContaining("Retry-After"),
    });
    expect((await app.inject({ url: "/r", remoteAddress: "10.1.1.2" })).statusCode).toBe(200);
  });

  it("never counts exempt paths, whatever their query, nor health checks", async () => {
    const app = await appWith({ max: 1, timeWindowMs: 1_000, exempt: ["/free"] });
    for (let i = 0; i < 5; i++) {
      const free = await app.inject({ url: `/free?i=${i}`, remoteAddress: "10.2.2.2" });
      expect(free.statusCode).toBe(200);
      expect(free.headers["x-ratelimit-limit"]).toBeUndefined();
      expect((await app.inject({ url: "/healthz", remoteAddress: "10.2.2.2" })).statusCode).toBe(200);
    }
    expect((await app.inject({ url: "/r", remoteAddress: "10.2.2.2" })).statusCode).toBe(200);
    const limited = await app.inject({ url: "/r", remoteAddress: "10.2.2.2" });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().message).toBe("Rate limit exceeded: 1 requests per second; retry in 1 s");
  });

  it("keeps a window per client, forgetting the least recently seen past maxClients", async () => {
    const app = await appWith({ max: 1, timeWindowMs: 60_000, maxClients: 2 });
    const from = (ip: string) => app.inject({ url: "/r", remoteAddress: ip });
    for (const ip of ["10.4.4.1", "10.4.4.2"]) expect((await from(ip)).statusCode).toBe(200);
    expect((await from("10.4.4.1")).statusCode).toBe(429);
    expect((await from("10.4.4.3")).statusCode).toBe(200);
    // 10.4.4.2, seen least recently, was dropped for 10.4.4.3: it starts afresh.
    expect((await from("10.4.4.2")).statusCode).toBe(200);
  });

  it("counts requests to unknown paths too", async () => {
    const app = await appWith({ max: 1, timeWindowMs: 60_000 });
    expect((await app.inject({ url: "/nowhere", remoteAddress: "10.3.3.3" })).statusCode).toBe(404);
    expect((await app.inject({ url: "/r", remoteAddress: "10.3.3.3" })).statusCode).toBe(429);
  });
});
