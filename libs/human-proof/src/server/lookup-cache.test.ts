import { didFromAddress } from "@humanpass/identity";
import { describe, expect, it } from "vitest";
import { account, registry, resolutionFor } from "../../test/proof-fixtures.ts";
import { cachePositiveLookups } from "./lookup-cache.ts";
import type { HumanResolution } from "./types.ts";

const agent = account(1);
const did = didFromAddress(agent.address, "main");

describe("cachePositiveLookups", () => {
  it("reuses a positive answer until it expires or the DID is invalidated", async () => {
    let now = 1_000;
    const inner = registry({ [did]: resolutionFor(agent.address) });
    const verifier = cachePositiveLookups(inner, { ttlMs: 1000, now: () => now });
    expect(await verifier.lookupHuman(did, "c")).toEqual(resolutionFor(agent.address));
    expect(await verifier.lookupHuman(did, "c")).toEqual(resolutionFor(agent.address));
    expect(inner.lookups).toHaveLength(1);
    now = 2_001;
    await verifier.lookupHuman(did, "c");
    expect(inner.lookups).toHaveLength(2);
    verifier.invalidate(did);
    await verifier.lookupHuman(did, "c");
    expect(inner.lookups).toHaveLength(3);
  });

  it("never caches a negative answer or an error", async () => {
    const inner = registry({});
    const verifier = cachePositiveLookups(inner, { ttlMs: 60_000 });
    expect(await verifier.lookupHuman(did, "c")).toBeNull();
    expect(await verifier.lookupHuman(did, "c")).toBeNull();
    inner.failing = true;
    await expect(verifier.lookupHuman(did, "c")).rejects.toThrow();
    expect(inner.lookups).toHaveLength(3);
  });

  it("keeps 'not paired' for negativeTtlMs, and forgets a revoked pairing", async () => {
    let now = 1_000;
    const paired: Record<string, HumanResolution> = {};
    const inner = registry(paired);
    const verifier = cachePositiveLookups(inner, { ttlMs: 60_000, negativeTtlMs: 500, now: () => now });
    expect(await verifier.lookupHuman(did, "c")).toBeNull();
    paired[did] = resolutionFor(agent.address);
    expect(await verifier.lookupHuman(did, "c")).toBeNull();
    now = 1_501;
    expect(await verifier.lookupHuman(did, "c")).toEqual(resolutionFor(agent.address));
    expect(inner.lookups).toHaveLength(2);
    verifier.revoke({ attestationId: resolutionFor(agent.address).attestationId, recipientDid: "did:other" });
    await verifier.lookupHuman(did, "c");
    expect(inner.lookups).toHaveLength(3);
  });

  it("keeps at most maxEntries DIDs and passes hasAttestation through", async () => {
    const agents = [account(1), account(2), account(3)];
    const inner = registry(
      Object.fromEntries(agents.map((a) => [didFromAddress(a.address, "main"), resolutionFor(a.address)])),
    );
    const verifier = cachePositiveLookups(inner, { ttlMs: 60_000, maxEntries: 2 });
    for (const a of agents) await verifier.lookupHuman(didFromAddress(a.address, "main"), "c");
    await verifier.lookupHuman(didFromAddress(agents[0].address, "main"), "c");
    expect(inner.lookups).toHaveLength(4);
    expect(await verifier.hasAttestation?.(did, "c", `0x${"ab".repeat(32)}`)).toBe(false);
  });
});
