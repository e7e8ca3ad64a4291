import type { HumanResolution } from "@humanpass/human-proof";
import { didFromAddress, iden3IdFromAddress } from "@humanpass/identity";
import { describe, expect, it } from "vitest";
import type { HumanResolver } from "./human-resolver";
import { addressKey, cachedResolver, didKey, ResolutionCache } from "./resolution-cache";

const AGENT = "0x1111111111111111111111111111111111111111";
const OTHER = "0x2222222222222222222222222222222222222222";
const ATTESTATION = `0x${"ab".repeat(32)}`;

function resolution(agent: string, attestationId = ATTESTATION): HumanResolution {
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

/** A resolver that answers from a table and counts how often it was asked. */
function countingResolver(answers: Map<string, HumanResolution | null>) {
  const calls = { n: 0 };
  const resolver: HumanResolver = {
    byAddress: async (address) => {
      calls.n++;
      return answers.get(address.toLowerCase()) ?? null;
    },
    byDid: async (did) => {
      calls.n++;
      return [...answers.values()].find((r) => r?.agentDid === did) ?? null;
    },
  };
  return { resolver, calls };
}

function setUp(ttlMs = 10_000) {
  let now = 1_000_000;
  const clock = () => now;
  const cache = new ResolutionCache({ ttlMs, maxEntries: 3, clock, revokedMemoryMs: 60_000 });
  const answers = new Map<string, HumanResolution | null>([[AGENT.toLowerCase(), resolution(AGENT)]]);
  const { resolver, calls } = countingResolver(answers);
  return {
    cache,
    answers,
    calls,
    resolver: cachedResolver(resolver, cache),
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe("positive-lookup cache", () => {
  it("reuses a positive answer until its time-to-live passes", async () => {
    const { resolver, calls, advance } = setUp();
    await resolver.byAddress(AGENT);
    await resolver.byAddress(AGENT.toUpperCase().replace("0X", "0x"));
    expect(calls.n).toBe(1);
    advance(10_000);
    await resolver.byAddress(AGENT);
    expect(calls.n).toBe(2);
  });

  it("never keeps a 'not paired' answer, so a new pairing counts at once", async () => {
    const { resolver, calls, answers } = setUp();
    expect(await resolver.byAddress(OTHER)).toBeNull();
    answers.set(OTHER.toLowerCase(), resolution(OTHER, `0x${"cd".repeat(32)}`));
    expect(await resolver.byAddress(OTHER)).not.toBeNull();
    expect(calls.n).toBe(2);
  });

  it("drops the entries of a revoked attestation, by attestation id and by recipient", async () => {
    const { cache, resolver, calls, answers } = setUp();
    await resolver.byAddress(AGENT);
    await resolver.byDid(didFromAddress(AGENT));
    expect(cache.size).toBe(2);
    answers.set(AGENT.toLowerCase(), null);
    cache.revoke({
      attestationId: ATTESTATION.toUpperCase().replace("0X", "0x"),
      recipientDid: "did:other",
      recipientIden3Id: "1",
    });
    expect(cache.size).toBe(0);
    expect(await resolver.byAddress(AGENT)).toBeNull();
    expect(calls.n).toBe(3);
  });

  it("drops entries named by the revocation's recipient even when the attestation id differs", () => {
    const { cache } = setUp();
    cache.set(addressKey(AGENT), resolution(AGENT, `0x${"01".repeat(32)}`));
    cache.set(didKey(didFromAddress(AGENT)), resolution(AGENT, `0x${"02".repeat(32)}`));
    cache.revoke({
      attestationId: ATTESTATION,
      recipientDid: "did:iden3:billions:main:other",
      recipientIden3Id: "1",
    });
    expect(cache.size).toBe(2);
    cache.revoke({
      attestationId: ATTESTATION,
      recipientDid: "not a did",
      recipientIden3Id: iden3IdFromAddress(AGENT),
    });
    expect(cache.get(addressKey(AGENT))).toBeUndefined();
    expect(cache.get(didKey(didFromAddress(AGENT)))).toBeDefined();
    cache.revoke({ attestationId: ATTESTATION, recipientDid: didFromAddress(AGENT), recipientIden3Id: "0" });
    expect(cache.get(didKey(didFromAddress(AGENT)))).toBeUndefined();
  });

  it("does not cache an answer that still shows an attestation already revoked on chain", async () => {
    const { cache, resolver, calls, advance } = setUp();
    cache.revoke({ attestationId: ATTESTATION, recipientDid: didFromAddress(AGENT), recipientIden3Id: "0" });
    await resolver.byAddress(AGENT);
    await resolver.byAddress(AGENT);
    expect(calls.n).toBe(2);
    advance(60_000);
    await resolver.byAddress(AGENT);
    await resolver.byAddress(AGENT);
    expect(calls.n).toBe(3);
  });

  it("keeps at most maxEntries, forgetting the oldest first", () => {
    const { cache } = setUp();
    for (const n of [1, 2, 3, 4]) cache.set(`k${n}`, resolution(AGENT));
    expect(cache.size).toBe(3);
    expect(cache.get("k1")).toBeUndefined();
    expect(cache.get("k4")).toBeDefined();
  });

  it("caches nothing with a time-to-live of 0", async () => {
    const { resolver, calls } = setUp(0);
    await resolver.byAddress(AGENT);
    await resolver.byAddress(AGENT);
    expect(calls.n).toBe(2);
  });

  it("forgets everything on clear (chain reorg)", async () => {
    const { cache, resolver } = setUp();
    await resolver.byAddress(AGENT);
    cache.clear();
    expect(cache.size).toBe(0);
  });
});
