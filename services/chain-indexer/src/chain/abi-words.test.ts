import { checksumAddress, keccak256, toHex } from "viem";
import { describe, expect, it } from "vitest";
import { checksummed } from "./abi-words";

describe("checksummed", () => {
  it("gives viem's EIP-55 checksum", () => {
    for (let n = 0; n < 200; n++) {
      const lower = keccak256(toHex(n)).slice(26);
      expect(checksummed(lower)).toBe(checksumAddress(`0x${lower}`));
    }
    expect(checksummed("0".repeat(40))).toBe(`0x${"0".repeat(40)}`);
  });
});
