import { randomBytes } from "node:crypto";
import type { Authorization } from "@humanpass/human-proof";
import { authorizationTypes } from "@x402/evm";
import { type Hex, hashTypedData } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { type TokenDomain, transferAuthorizationDigest } from "./transfer-digest.ts";

const address = () => privateKeyToAccount(generatePrivateKey()).address;

function viem(domain: TokenDomain, a: Authorization): string {
  try {
    return hashTypedData({
      domain: { ...domain, verifyingContract: domain.verifyingContract as Hex },
      types: authorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: {
        from: a.from as Hex,
        to: a.to as Hex,
        value: BigInt(a.value),
        validAfter: BigInt(a.validAfter),
        validBefore: BigInt(a.validBefore),
        nonce: a.nonce as Hex,
      },
    });
  } catch {
    return "throws";
  }
}

function ours(domain: TokenDomain, a: Authorization): string {
  try {
    return `0x${transferAuthorizationDigest(domain, a).toString("hex")}`;
  } catch {
    return "throws";
  }
}

describe("transferAuthorizationDigest", () => {
  it("is viem's hashTypedData over x402's TransferWithAuthorization, for any domain and values", () => {
    for (let i = 0; i < 50; i++) {
      const domain = {
        name: `USD Coin ${i} ✓`,
        version: String(i % 3),
        chainId: 1 + i * 7919,
        verifyingContract: address(),
      };
      const authorization = {
        from: i % 2 ? address() : address().toLowerCase(),
        to: address(),
        value: String(BigInt(`0x${randomBytes(1 + (i % 32)).toString("hex")}`)),
        validAfter: String(i),
        validBefore: String(1_800_000_000 + i),
        nonce: `0x${randomBytes(32).toString("hex")}`,
      };
      expect(ours(domain, authorization)).toBe(viem(domain, authorization));
    }
  });

  it("refuses what viem refuses: a bad EIP-55 checksum, an amount past uint256, a short nonce", () => {
    const domain = { name: "USD Coin", version: "2", chainId: 45056, verifyingContract: address() };
    const good = {
      from: address(),
      to: address(),
      value: "10000",
      validAfter: "0",
      validBefore: "1800000000",
      nonce: `0x${"ab".repeat(32)}`,
    };
    const flipped = good.from.replace(/[a-f]/, (c) => c.toUpperCase());
    const cases = [
      { ...good, from: flipped },
      { ...good, value: String(1n << 256n) },
      { ...good, value: String((1n << 256n) - 1n) },
      { ...good, nonce: `0x${"ab".repeat(31)}` },
      { ...good, to: good.to.toUpperCase().replace("0X", "0x") },
    ];
    for (const authorization of cases) {
      expect({ authorization, digest: ours(domain, authorization) }).toEqual({
        authorization,
        digest: viem(domain, authorization),
      });
    }
    expect(ours(domain, cases[0]!)).toBe("throws");
    expect(ours(domain, cases[1]!)).toBe("throws");
    expect(ours(domain, cases[3]!)).toBe("throws");
  });
});
