import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { createHttpApp, type HttpAppOptions } from "./app.ts";

/** TRUST_PROXY as a list: the addresses a replica believes about who the client is. */
describe("client address behind listed proxies", () => {
  const PROXIES = ["10.0.0.0/8", "fd00::/8"];
  const apps: Awaited<ReturnType<typeof createHttpApp>>[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  async function appWith(options: Partial<HttpAppOptions> = {}) {
    const app = await createHttpApp({ logger: pino({ level: "silent" }), trustProxy: PROXIES, ...options });
    app.get("/ip", async (request) => ({ ip: request.ip }));
    apps.push(app);
    return app;
  }

  it("holds the limit for a client reaching a replica directly, whatever X-Forwarded-For it rotates", async () => {
    const app = await appWith({ rateLimit: { max: 100, timeWindowMs: 60_000 } });
    const statuses: number[] = [];
    for (let i = 0; i < 110; i++) {
      const response = await app.inject({
        url: "/ip",
        remoteAddress: "203.0.113.50",
        headers: { "x-forwarded-for": `198.51.100.${i}, 10.0.0.${i}` },
      });
      statuses.push(response.statusCode);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.slice(100)).toEqual(Array(10).fill(429));
  });

  it("honours a listed proxy: each client it forwards is counted on its own, by the address the outermost listed proxy saw", async () => {
    const app = await appWith({ rateLimit: { max: 1, timeWindowMs: 60_000 } });
    const via = (forwardedFor: string, proxy = "10.1.2.3") =>
      app.inject({ url: "/ip", remoteAddress: proxy, headers: { "x-forwarded-for": forwardedFor } });
    const first = await via("198.51.100.1");
    expect({ status: first.statusCode, ip: first.json().ip }).toEqual({ status: 200, ip: "198.51.100.1" });
    expect((await via("198.51.100.1")).statusCode).toBe(429);
    expect((await via("198.51.100.2")).statusCode).toBe(200);
    // The entries left of the address a listed proxy appended are the client's own writing.
    const chained = await via("192.0.2.66, 198.51.100.3, 10.9.9.9, fd00::7", "fd00::1");
    expect(chained.json()).toEqual({ ip: "198.51.100.3" });
  });

  it("never takes an X-Forwarded-For entry that is not an IP address for the client: the socket peer stands in", async () => {
    const app = await appWith();
    for (const forwardedFor of [
      "not-an-ip-79",
      "unknown",
      "198.51.100.1:8080",
      "[2001:db8::1]",
      "198.51.100.1, not-an-ip",
      "",
    ]) {
      const response = await app.inject({
        url: "/ip",
        remoteAddress: "10.1.2.3",
        headers: { "x-forwarded-for": forwardedFor },
      });
      expect({ forwardedFor, ...response.json() }).toEqual({ forwardedFor, ip: "10.1.2.3" });
    }
  });

  it("trusts no peer when no proxy is listed", async () => {
    const app = await appWith({ trustProxy: [] });
    const response = await app.inject({
      url: "/ip",
      remoteAddress: "10.1.2.3",
      headers: { "x-forwarded-for": "198.51.100.1" },
    });
    expect(response.json()).toEqual({ ip: "10.1.2.3" });
  });

  it("logs the socket peer beside the client address", async () => {
    const lines: Array<{ msg: string; req?: Record<string, unknown> }> = [];
    const logger = pino(
      { level: "info" },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    );
    const app = await appWith({ logger });
    for (const forwardedFor of ["198.51.100.4", "not-an-ip-79"]) {
      await app.inject({
        url: "/ip",
        remoteAddress: "10.1.2.3",
        headers: { "x-forwarded-for": forwardedFor },
      });
    }
    const incoming = lines.filter((l) => l.msg === "incoming request").map((l) => l.req);
    expect(incoming).toEqual([
      expect.objectContaining({ remoteAddress: "198.51.100.4", peerAddress: "10.1.2.3" }),
      expect.objectContaining({ remoteAddress: "10.1.2.3", peerAddress: "10.1.2.3" }),
    ]);
  });
});
