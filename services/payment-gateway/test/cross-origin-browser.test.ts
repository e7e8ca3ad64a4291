/**
 * A web page on another origin calls the gateway from a real headless Chromium (Debian's `chromium`): the browser
 * lets its script read the x402 terms of a 402 and when to retry after a 429, which it hides from a page unless
 * the gateway's CORS answer exposes those headers.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { HttpApp } from "@humanpass/http";
import {
  createPoUVerifier,
  InMemoryPaymentReservations,
  InMemoryUsedNonceStore,
  sequentialAdmissions,
} from "@humanpass/human-proof";
import { createMockFacilitatorClient } from "@humanpass/x402-fastify";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.ts";
import { parseRoutesFile } from "../src/routes-file.ts";
import { logger } from "./support/stack.ts";

const NETWORK = "eip155:45056";
const USDC = "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9";
const LIMIT = 3;

let browser: Browser;
let site: Server;
let siteUrl: string;
let gateway: HttpApp;
let gatewayUrl: string;

/** The other origin: one page, whose script the test drives. */
async function startSite(): Promise<string> {
  site = createServer((_request, response) => {
    response
      .writeHead(200, { "content-type": "text/html" })
      .end("<!doctype html><html><head><title>Shop</title></head><body>Shop</body></html>");
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  siteUrl = await startSite();
  gateway = await buildApp({
    logger,
    publicUrl: "http://127.0.0.1",
    routesFile: parseRoutesFile({
      assets: { [NETWORK]: { address: USDC, name: "USD Coin", version: "2", decimals: 6 } },
      routes: [
        {
          path: "/weather",
          description: "Weather",
          mimeType: "application/json",
          accepts: [{ scheme: "exact", price: "$0.01", network: NETWORK }],
        },
      ],
    }),
    payTo: "0x000000000000000000000000000000000000dEaD",
    facilitator: createMockFacilitatorClient({ kinds: [{ network: NETWORK, scheme: "exact" }] }),
    // Never asked: an unpaid request stops at the 402.
    verifier: createPoUVerifier({ attestationsApiBaseUrl: "http://127.0.0.1:9/api/v1/attestations" }),
    admissions: sequentialAdmissions({ nonceStore: new InMemoryUsedNonceStore() }),
    reservations: new InMemoryPaymentReservations(),
    events: { emit: async () => {} },
    corsOrigins: [siteUrl],
    rateLimit: { max: LIMIT, timeWindowMs: 60_000 },
  });
  gatewayUrl = await gateway.listen({ port: 0, host: "127.0.0.1" });
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
});

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  await new Promise((resolve) => site?.close(resolve));
});

interface Seen {
  status: number;
  paymentRequired: string | null;
  retryAfter: string | null;
  remaining: string | null;
  error?: string;
}

describe("a page on another origin", () => {
  it("reads PAYMENT-REQUIRED from a 402, then Retry-After from a 429", async () => {
    expect(new URL(siteUrl).origin).not.toBe(new URL(gatewayUrl).origin);
    const page = await browser.newPage();
    await page.goto(siteUrl);

    const seen: Seen[] = await page.evaluate(
      async ({ url, calls }) => {
        const answers = [];
        for (let i = 0; i < calls; i++) {
          // A custom header makes this a preflighted call, as a client sending PAYMENT-SIGNATURE would be.
          const response = await fetch(url, { headers: { accept: "application/json", "x-client": "shop" } });
          const body = (await response.json()) as { error?: string };
          answers.push({
            status: response.status,
            paymentRequired: response.headers.get("PAYMENT-REQUIRED"),
            retryAfter: response.headers.get("Retry-After"),
            remaining: response.headers.get("X-RateLimit-Remaining"),
            error: body.error,
          });
        }
        return answers;
      },
      { url: `${gatewayUrl}/weather`, calls: LIMIT + 1 },
    );
    await page.close();

    const [first, , , limited] = seen;
    expect(first).toMatchObject({
      status: 402,
      paymentRequired: expect.any(String),
      remaining: String(LIMIT - 1),
    });
    const terms = decodePaymentRequiredHeader(first!.paymentRequired!);
    expect(terms.accepts[0]).toMatchObject({ scheme: "exact", network: NETWORK });
    expect(limited).toMatchObject({
      status: 429,
      error: "rate_limited",
      retryAfter: expect.any(String),
      remaining: "0",
    });
    expect(Number(limited!.retryAfter)).toBeGreaterThan(0);
    expect(Number(limited!.retryAfter)).toBeLessThanOrEqual(60);
  });

  it("is refused by the browser when its origin is not configured", async () => {
    const page = await browser.newPage();
    // The same site under another host name: an origin the gateway does not list.
    await page.goto(siteUrl.replace("127.0.0.1", "localhost"));
    const outcome = await page.evaluate(async (url) => {
      try {
        await fetch(url, { headers: { accept: "application/json" } });
        return "read";
      } catch (e) {
        return (e as Error).name;
      }
    }, `${gatewayUrl}/weather`);
    await page.close();
    expect(outcome).toBe("TypeError");
  });
});
