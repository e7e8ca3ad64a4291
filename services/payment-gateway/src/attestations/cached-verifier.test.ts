import type { HumanResolution, PoUVerifier } from "@humanpass/human-proof";
import { describe, expect, it } from "vitest";
import { CachedPoUVerifier } from "./cached-verifier";

function resolution(did: string, attestationId = "0xAA"): HumanResolution {
  return {
    humanId: "42",
    verifiedAt: "2026-01-01T00:00:00.000Z",
    attestationId,
    humanDid: "did:human",
    humanAddress: "0x1",
    agentDid: did,
    agentAddress: "0x2",
  };
}

function counting(answers: Record<string, HumanResolution | null>) {
  const calls: string[] = [];
  const inner: PoUVerifier = {
    ownershipSchema: "0xschema",
    async lookupHuman(did) {
      calls.push(did);
      await new Promise((r) => setTimeout(r, 5));
      return answers[did] ?? null;
    },
  };
  return { inner, calls };
}

describe("CachedPoUVerifier", () => {
  it("looks a found human up once per TTL, and once for concurrent requests", async () => {
    let now = 0;
    const { inner, calls } = counting({ "did:a": resolution("did:a") });
    const verifier = new CachedPoUVerifier(inner, { ttlMs: 1_000, now: () => now });
    await Promise.all([verifier.lookupHuman("did:a", "c"), verifier.lookupHuman("did:a", "c")]);
    expect(await verifier.lookupHuman("did:a", "c")).toMatchObject({ humanId: "42" });
    expect(calls).toEqual(["did:a"]);
    now = 1_000;
    await verifier.lookupHuman("did:a", "c");
    expect(calls).toEqual(["did:a", "did:a"]);
  });

  it("reuses 'not paired' only for negativeTtlMs, so DIDs of fresh keys do not each cost a lookup", async () => {
    let now = 0;
    const answers: Record<string, HumanResolution | null> = {};
    const { inner, calls } = counting(answers);
    const verifier = new CachedPoUVerifier(inner, { ttlMs: 60_000, negativeTtlMs: 2_000, now: () => now });
    expect(await verifier.lookupHuman("did:n", "c")).toBeNull();
    answers["did:n"] = resolution("did:n");
    now = 1_999;
    expect(await verifier.lookupHuman("did:n", "c")).toBeNull();
    expect(calls).toEqual(["did:n"]);
    now = 2_000;
    expect(await verifier.lookupHuman("did:n", "c")).toMatchObject({ humanId: "42" });
    expect(calls).toEqual(["did:n", "did:n"]);
  });

  it("without negativeTtlMs never caches 'not paired', so a new pairing counts at once", async () => {
    const answers: Record<string, HumanResolution | null> = {};
    const { inner, calls } = counting(answers);
    const verifier = new CachedPoUVerifier(inner, { ttlMs: 60_000 });
    expect(await verifier.lookupHuman("did:b", "c")).toBeNull();
    answers["did:b"] = resolution("did:b");
    expect(await verifier.lookupHuman("did:b", "c")).not.toBeNull();
    expect(calls).toEqual(["did:b", "did:b"]);
  });

  it("forgets a revoked pairing and does not cache it again from a lagging API", async () => {
    const { inner, calls } = counting({ "did:c": resolution("did:c", "0xAbC") });
    const verifier = new CachedPoUVerifier(inner, { ttlMs: 60_000 });
    await verifier.lookupHuman("did:c", "c");
    verifier.revoke("0xabc", "did:c");
    await verifier.lookupHuman("did:c", "c");
    await verifier.lookupHuman("did:c", "c");
    expect(calls).toEqual(["did:c", "did:c", "did:c"]);
  });

  it("with TTL 0 always asks", async () => {
    const { inner, calls } = counting({ "did:d": resolution("did:d") });
    const verifier = new CachedPoUVerifier(inner, { ttlMs: 0 });
    await verifier.lookupHuman("did:d", "c");
    await verifier.lookupHuman("did:d", "c");
    expect(calls).toHaveLength(2);
  });
});
