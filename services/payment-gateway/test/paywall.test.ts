/** What an unpaid person sees: the paywall page in a real headless Chromium (Debian's `chromium`). */

import type { HttpApp } from "@humanpass/http";
import {
  createPoUVerifier,
  InMemoryPaymentReservations,
  InMemoryUsedNonceStore,
  sequentialAdmissions,
} from "@humanpass/human-proof";
import { createMockFacilitatorClient } from "@humanpass/x402-fastify";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.ts";
import { parseRoutesFile } from "../src/routes-file.ts";
import { logger } from "./support/stack.ts";

const NETWORK = "eip155:45056";
const USDC = "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9";
let browser: Browser;
const apps: HttpApp[] = [];

async function gateway(paywallHtml?: string): Promise<string> {
  const app = await buildApp({
    logger,
    // What the paywall shows does not depend on it.
    publicUrl: "http://127.0.0.1",
    routesFile: parseRoutesFile({
      assets: { [NETWORK]: { address: USDC, name: "USD Coin", version: "2", decimals: 6 } },
      routes: [
        {
          path: "/weather",
          description: "Weather",
          mimeType: "application/json",
          accepts: [
            { scheme: "exact", price: "$0.01", network: NETWORK },
            {
              scheme: "exact",
              price: "$0.001",
              network: NETWORK,
              extra: { requiredAttestations: ["$ownership"] },
            },
          ],
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
    paywallHtml,
    rateLimit: false,
  });
  apps.push(app);
  return app.listen({ port: 0, host: "127.0.0.1" });
}

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
});

afterAll(async () => {
  await browser?.close();
  await Promise.all(apps.map((app) => app.close()));
});

describe("an unpaid browser", () => {
  it("gets the paywall page with the human-proof instructions, status 402", async () => {
    const url = await gateway();
    const page = await browser.newPage();
    const response = await page.goto(`${url}/weather`);

    expect(response?.status()).toBe(402);
    expect(response?.headers()["content-type"]).toMatch(/^text\/html/);
    expect(await page.title()).toBe("402 Payment Required");
    const text = await page.locator("body").innerText();
    expect(text).toContain("A lower price is offered to agents backed by a verified human");
    expect(text).toContain("verified-agent-identity");
    await page.close();
  });

  it("gets the operator's own page when one is configured", async () => {
    const url = await gateway(
      "<!doctype html><html><head><title>Pay to read</title></head><body><h1>Bring an agent</h1></body></html>",
    );
    const page = await browser.newPage();
    const response = await page.goto(`${url}/weather`);

    expect(response?.status()).toBe(402);
    expect(await page.title()).toBe("Pay to read");
    expect(await page.locator("h1").innerText()).toBe("Bring an agent");
    await page.close();
  });

  it("while an API client gets JSON and the terms in PAYMENT-REQUIRED", async () => {
    const url = await gateway();
    const response = await fetch(`${url}/weather`, { headers: { accept: "application/json" } });
    expect(response.status).toBe(402);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.headers.get("payment-required")).toBeTruthy();
  });
});
