import { didFromAddress, iden3IdFromAddress } from "@humanpass/identity";
import { describe, expect, it } from "vitest";
import { HumanCache, type HumanCacheOptions } from "./cache.ts";
import type { HumanResolution } from "./lookup.ts";

const AGENT = "0x1111111111111111111111111111111111111111";
const OTHER = "0x2222222222222222222222222222222222222222";
const ATTESTATION = `0x${"ab".repeat(32)}`;

function resolution(agent = AGENT, attestationId = ATTESTATION): HumanResolution {
  return {
    humanId: "42",
    verifiedAt: "2026-01-01T00:00:00.000Z",
    attestationId,
    humanDid: "did:iden3:billions:main:human",
    humanAddress: OTHER,
    agentDid: didFromAddress(agent),
    agentAddress: agent,
  };
}

function setUp(options: Partial<HumanCacheOptions> = {}) {
  let now = 1_000;
  const cache = new HumanCache({ ttlMs: 10_000, maxEntries: 3, now: () => now, ...options });
  const answers = new Map<string, HumanResolution | null>([[AGENT, resolution()]]);
  const calls: string[] = [];
  const lookup = (key: string) =>
    cache.lookup(key, async () => {
      calls.push(key);
      await new Promise((r) => setTimeout(r, 2));
      return answers.get(key) ?? null;
    });
  const advance = (ms: number) => {
    now += ms;
  };
  return { cache, answers, calls, lookup, advance };
}

describe("HumanCache", () => {
  it("reuses a found human until its time-to-live passes, and shares one load between concurrent lookups", async () => {
    const { lookup, calls, advance } = setUp();
    await Promise.all([lookup(AGENT), lookup(AGENT)]);
    expect(await lookup(AGENT)).toMatchObject({ humanId: "42" });
    expect(calls).toEqual([AGENT]);
    advance(10_001);
    await lookup(AGENT);
    expect(calls).toEqual([AGENT, AGENT]);
  });

  it("never keeps 'not paired' by default, so a new pairing counts at once", async () => {
    const { lookup, calls, answers } = setUp();
    expect(await lookup(OTHER)).toBeNull();
    answers.set(OTHER, resolution(OTHER));
    expect(await lookup(OTHER)).not.toBeNull();
    expect(calls).toEqual([OTHER, OTHER]);
  });

  it("keeps 'not paired' for negativeTtlMs only", async () => {
    const { lookup, calls, answers, advance } = setUp({ negativeTtlMs: 2_000 });
    expect(await lookup(OTHER)).toBeNull();
    answers.set(OTHER, resolution(OTHER));
    advance(1_999);
    expect(await lookup(OTHER)).toBeNull();
    advance(2);
    expect(await lookup(OTHER)).toMatchObject({ agentAddress: OTHER });
    expect(calls).toEqual([OTHER, OTHER]);
  });

  it("caches nothing with a time-to-live of 0", async () => {
    const { lookup, calls } = setUp({ ttlMs: 0 });
    await lookup(AGENT);
    await lookup(AGENT);
    expect(calls).toHaveLength(2);
  });

  it("drops what a revocation unpairs: by attestation id, recipient DID, or the address of its iden3 ID", async () => {
    const { cache, lookup, answers } = setUp({ maxEntries: 10 });
    let n = 0;
    // Each round pairs the agent through a new attestation: a revoked one is kept out of the cache for a while.
    const pairAgain = async () => {
      const attestationId = `0x${(++n).toString(16).padStart(64, "0")}`;
      answers.set(AGENT, resolution(AGENT, attestationId));
      await lookup(AGENT);
      expect(cache.size).toBe(1);
      return attestationId;
    };
    const unrelated = `0x${"ff".repeat(32)}`;
    const first = await pairAgain();
    cache.invalidate({ attestationId: first.toUpperCase().replace("0X", "0x"), recipientDid: "did:x" });
    expect(cache.size).toBe(0);
    await pairAgain();
    cache.invalidate({ attestationId: unrelated, recipientDid: didFromAddress(AGENT) });
    expect(cache.size).toBe(0);
    await pairAgain();
    cache.invalidate({
      attestationId: unrelated,
      recipientDid: "not a did",
      recipientIden3Id: iden3IdFromAddress(AGENT),
    });
    expect(cache.size).toBe(0);
    await pairAgain();
    cache.invalidate({ attestationId: unrelated, recipientDid: didFromAddress(OTHER) });
    expect(cache.size).toBe(1);
  });

  it("does not keep an answer that still shows a revoked attestation, until revokedMemoryMs has passed", async () => {
    const { cache, lookup, calls, advance } = setUp({ revokedMemoryMs: 60_000 });
    cache.invalidate({ attestationId: ATTESTATION, recipientDid: "did:other" });
    await lookup(AGENT);
    await lookup(AGENT);
    expect(calls).toHaveLength(2);
    advance(60_001);
    await lookup(AGENT);
    await lookup(AGENT);
    expect(calls).toHaveLength(3);
  });

  it("returns but does not keep an answer asked for before a clear", async () => {
    const { cache, lookup, calls } = setUp();
    const before = lookup(AGENT);
    cache.clear();
    expect(await before).toMatchObject({ humanId: "42" });
    await lookup(AGENT);
    expect(calls).toHaveLength(2);
  });

  it("keeps at most maxEntries, forgetting the least recently used", async () => {
    const { cache, lookup, answers, calls } = setUp();
    for (const n of [1, 2, 3]) answers.set(`k${n}`, resolution());
    for (const key of ["k1", "k2", "k3"]) await lookup(key);
    await lookup("k1");
    answers.set("k4", resolution());
    await lookup("k4");
    expect(cache.size).toBe(3);
    await lookup("k1");
    await lookup("k2");
    expect(calls).toEqual(["k1", "k2", "k3", "k4", "k2"]);
  });
});
