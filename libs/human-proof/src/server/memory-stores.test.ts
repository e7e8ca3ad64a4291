import { describe, expect, it } from "vitest";
import { InMemoryHumanUsageStorage, InMemoryUsedNonceStore } from "./memory-stores.ts";
import { paywallInstructions } from "./paywall.ts";

describe("InMemoryHumanUsageStorage", () => {
  it("increments only below maxUse and decrements only above zero, per (human, scope)", async () => {
    const storage = new InMemoryHumanUsageStorage();
    expect(await storage.incrementIfBelow("h", 2, "a")).toBe(1);
    expect(await storage.incrementIfBelow("h", 2, "a")).toBe(2);
    expect(await storage.incrementIfBelow("h", 2, "a")).toBeNull();
    expect(await storage.incrementIfBelow("h", 2, "b")).toBe(1);
    expect(await storage.decrementIfAboveZero("h", "a")).toBe(1);
    expect(await storage.decrementIfAboveZero("h", "a")).toBe(0);
    expect(await storage.decrementIfAboveZero("h", "a")).toBeNull();
  });
});

describe("InMemoryUsedNonceStore", () => {
  it("accepts a nonce once, and forgets it after it expires", async () => {
    let now = 1_000;
    const store = new InMemoryUsedNonceStore(() => now);
    expect(await store.consume("n", new Date(2_000))).toBe(true);
    expect(await store.consume("n", new Date(2_000))).toBe(false);
    now = 2_000;
    expect(await store.consume("n", new Date(3_000))).toBe(true);
  });
});

describe("paywallInstructions", () => {
  it("serves the identity-skill page by default, or the given HTML", () => {
    const page = paywallInstructions().generateHtml({
      x402Version: 2,
      resource: { url: "", description: "", mimeType: "" },
      accepts: [],
    });
    expect(page).toContain("verified-agent-identity");
    expect(
      paywallInstructions("<p>pay</p>").generateHtml({
        x402Version: 2,
        resource: { url: "", description: "", mimeType: "" },
        accepts: [],
      }),
    ).toBe("<p>pay</p>");
  });
});
