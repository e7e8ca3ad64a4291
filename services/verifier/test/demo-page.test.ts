import type { HttpApp } from "@humanpass/http";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDocumentLoader } from "../src/verification/document-loader.ts";
import { createTokenVerifier } from "../src/verification/token-verifier.ts";
import { ANY_PROOF_AGE_MS, FIXTURE_CONTEXTS_DIR, latestStateResolvers, stable } from "./support/fixtures.ts";
import { type Backend, startApp, startBackend, testSettings } from "./support/harness.ts";
import { testEngine } from "./support/settings.ts";

let backend: Backend;
let app: HttpApp;
let browser: Browser;
let baseUrl: string;

beforeAll(async () => {
  backend = await startBackend("verifier_demo");
  const verifier = await createTokenVerifier({
    stateResolvers: latestStateResolvers(stable.network),
    documentLoader: createDocumentLoader({ localDirs: [FIXTURE_CONTEXTS_DIR] }),
    proofMaxAgeMs: ANY_PROOF_AGE_MS,
    engine: testEngine,
  });
  // The fixture token answers scope id 3: the page's session gets that id.
  app = await startApp(backend, { verifier, drawSessionId: () => Number(stable.sessionId) });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  baseUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await backend?.close();
});

describe("demo page in headless Chromium", () => {
  it("shows the request as a QR code and reaches 'verified' once a valid callback arrives", async () => {
    const page = await browser.newPage();
    await page.goto(baseUrl);
    await page.click("#verify");

    const qr = page.locator("#qr img");
    await qr.waitFor({ state: "visible" });
    // Runs in the page: the QR image has loaded and has real pixels.
    await page.waitForFunction(
      '(() => { const img = document.querySelector("#qr img"); return img.complete && img.naturalWidth > 100; })()',
    );
    const link = await page.locator("#wallet-link").getAttribute("href");
    expect(link?.startsWith(`${testSettings.walletUrl}/#i_m=`)).toBe(true);
    const shown = JSON.parse(Buffer.from((link as string).split("#i_m=")[1], "base64").toString("utf8"));
    expect(shown.body.scope[0].id).toBe(3);
    expect(await page.locator("#status").textContent()).toBe("waiting for your wallet…");

    // The wallet's side: the public test vector answers the fixture's request, so the session holds that one.
    await backend.db
      .updateTable("sessions")
      .set({ request: JSON.stringify(stable.request) })
      .where("session_id", "=", "3")
      .execute();
    const callback = await fetch(`${baseUrl}/api/callback?sessionId=3`, {
      method: "POST",
      body: stable.token,
    });
    expect(callback.status).toBe(200);

    await page.waitForFunction('document.getElementById("status").textContent === "verified"', null, {
      timeout: 20_000,
    });
    expect(await page.locator("#status").getAttribute("data-state")).toBe("verified");
    await page.close();
  });
});
