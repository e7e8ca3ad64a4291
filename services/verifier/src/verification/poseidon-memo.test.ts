import { describe, expect, it } from "vitest";
import { jsCrypto } from "./iden3-modules.ts";
import { LruCache, memoizePoseidon } from "./poseidon-memo.ts";

describe("Poseidon memo", () => {
  it("returns what the library computes, for repeated and fresh inputs", () => {
    const inputs = [1n, 2n, 3n, 4n, 5n, 6n];
    const bytes = new TextEncoder().encode("https://example.org/schema#field");
    const values = Array.from({ length: 64 }, (_, i) => BigInt(i * 7));
    const expected = {
      hash: jsCrypto.Poseidon.hash(inputs),
      bytes: jsCrypto.Poseidon.hashBytes(bytes),
      sponge: jsCrypto.Poseidon.spongeHashX(values, 6),
    };
    memoizePoseidon(16);
    for (let i = 0; i < 3; i++) {
      expect(jsCrypto.poseidon.hash(inputs)).toBe(expected.hash);
      expect(jsCrypto.poseidon.hashBytes(bytes)).toBe(expected.bytes);
      expect(jsCrypto.poseidon.spongeHashX(values, 6)).toBe(expected.sponge);
    }
    expect(jsCrypto.poseidon.hash([7n])).not.toBe(jsCrypto.poseidon.hash([8n]));
  });

  it("keeps throwing for inputs outside the field", () => {
    memoizePoseidon(16);
    const p = jsCrypto.Poseidon.F.p;
    expect(() => jsCrypto.poseidon.hash([p])).toThrow(/not in the field/);
    expect(() => jsCrypto.poseidon.hash([p])).toThrow(/not in the field/);
  });

  it("evicts the least recently used entry", () => {
    const cache = new LruCache<string, number>(2);
    cache.set("a", 1);
    cache.set("b", 2);
    cache.get("a");
    cache.set("c", 3);
    expect([cache.get("a"), cache.get("b"), cache.get("c"), cache.size]).toEqual([1, undefined, 3, 2]);
  });
});
