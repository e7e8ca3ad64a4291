import { describe, expect, it } from "vitest";
import { CHALLENGE_NONCE_PATTERN, createChallengeNonces } from "./challenge-nonces.ts";

const terms = { domain: "api.example.com", uri: "https://api.example.com/x" };
const issuedAt = Date.parse("2026-11-28T05:00:00.123Z");

describe("createChallengeNonces", () => {
  it("issues distinct nonces of spec 3's length that carry their issue time", () => {
    const nonces = createChallengeNonces({ keys: ["a".repeat(32)] });
    const [first, second] = [nonces.issue(terms, issuedAt), nonces.issue(terms, issuedAt)];
    expect(first).toMatch(CHALLENGE_NONCE_PATTERN);
    expect(first).toMatch(/^[0-9a-f]{32}$/);
    expect(first).not.toBe(second);
    expect(nonces.issuedAt(first, terms)).toBe(issuedAt);
  });

  it("recognises a nonce only for the terms and purpose it was issued for", () => {
    const nonces = createChallengeNonces({ keys: ["a".repeat(32)] });
    const nonce = nonces.issue({ ...terms, purpose: "helper" }, issuedAt);
    expect(nonces.issuedAt(nonce, { ...terms, purpose: "helper" })).toBe(issuedAt);
    expect(nonces.issuedAt(nonce, { ...terms, purpose: "direct" })).toBeUndefined();
    expect(nonces.issuedAt(nonce, { ...terms, domain: "evil.example", purpose: "helper" })).toBeUndefined();
    // Its issue time cannot be moved: the MAC covers it.
    const moved = (issuedAt + 1).toString(16).padStart(12, "0") + nonce.slice(12);
    expect(nonces.issuedAt(moved, { ...terms, purpose: "helper" })).toBeUndefined();
  });

  it("accepts every key of its ring and signs with the first: a nonce of the previous key redeems after a rotation", () => {
    const [oldKey, newKey] = ["o".repeat(32), "n".repeat(32)];
    const before = createChallengeNonces({ keys: [oldKey] });
    const rotated = createChallengeNonces({ keys: [newKey, oldKey] });
    const retired = createChallengeNonces({ keys: [newKey] });
    const old = before.issue(terms, issuedAt);
    expect(rotated.issuedAt(old, terms)).toBe(issuedAt);
    expect(retired.issuedAt(old, terms)).toBeUndefined();
    expect(before.issuedAt(rotated.issue(terms, issuedAt), terms)).toBeUndefined();
    expect(createChallengeNonces().issuedAt(old, terms)).toBeUndefined();
  });

  it("refuses keys shorter than 32 characters", () => {
    expect(() => createChallengeNonces({ keys: ["short"] })).toThrow(/at least 32/);
  });
});
