import {
  type Hex,
  hashMessage,
  hashTypedData,
  recoverAddress,
  recoverMessageAddress,
  stringToBytes,
  toHex,
  keccak256 as viemKeccak,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { hashPersonalMessage, keccak256, recoverHashSigner, recoverMessageSigner } from "./recover-signer.ts";

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

async function viem(message: string, signature: string): Promise<string | undefined> {
  try {
    return await recoverMessageAddress({ message, signature: signature as Hex });
  } catch {
    return undefined;
  }
}

function parts(signature: string) {
  return {
    r: BigInt(signature.slice(0, 66)),
    s: BigInt(`0x${signature.slice(66, 130)}`),
    v: Number.parseInt(signature.slice(130), 16),
  };
}

function join(r: bigint, s: bigint, v: number): string {
  return `${toHex(r, { size: 32 })}${toHex(s, { size: 32 }).slice(2)}${v.toString(16).padStart(2, "0")}`;
}

describe("recoverMessageSigner", () => {
  it("recovers the signer of an EIP-191 message, as viem does, for every form of v", async () => {
    for (let i = 0; i < 20; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const message = `challenge ${i} ✓ für\nNonce: ${i}`;
      const signature = await account.signMessage({ message });
      const { r, s, v } = parts(signature);
      for (const form of [v, v - 27]) {
        const variant = join(r, s, form);
        expect(await recoverMessageSigner(message, variant)).toBe(account.address);
        expect(await viem(message, variant)).toBe(account.address);
      }
      expect(await recoverMessageSigner(`${message}.`, signature)).not.toBe(account.address);
    }
  });

  it("refuses the high-s twin of a valid signature (EIP-2), which viem accepts", async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const message = "hello";
    const signature = await account.signMessage({ message });
    const { r, s, v } = parts(signature);
    const twin = join(r, N - s, v === 27 ? 28 : 27);
    expect(await viem(message, twin)).toBe(account.address);
    expect(await recoverMessageSigner(message, twin)).toBeUndefined();
    expect(await recoverMessageSigner(message, twin.slice(0, 130))).toBeUndefined();
    expect(await recoverMessageSigner(message, signature)).toBe(account.address);
  });

  it("gives the same answer as viem for malformed and out-of-range signatures", async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const message = "hello";
    const signature = await account.signMessage({ message });
    const { r, s, v } = parts(signature);
    const cases = [
      join(r, s, 29),
      join(r, s, 2),
      join(0n, s, v),
      join(r, 0n, v),
      join(r, N, v),
      join(N + 1n, s, v),
      signature.slice(0, 130),
      `${signature}00`,
    ];
    for (const variant of cases) {
      expect({ variant, ours: await recoverMessageSigner(message, variant) }).toEqual({
        variant,
        ours: await viem(message, variant),
      });
    }
  });

  it("refuses what is not a hex signature", async () => {
    for (const signature of [undefined, "", "0x", "zz", "0xzz"]) {
      expect(await recoverMessageSigner("hello", signature)).toBeUndefined();
    }
  });
});

describe("recoverHashSigner", () => {
  const typedData = (i: number) =>
    ({
      domain: { name: "USD Coin", version: "2", chainId: 45056, verifyingContract: `0x${"ab".repeat(20)}` },
      types: { Mail: [{ name: "contents", type: "string" }] },
      primaryType: "Mail",
      message: { contents: `mail ${i}` },
    }) as const;

  async function viemHash(hash: Hex, signature: string): Promise<string | undefined> {
    try {
      return await recoverAddress({ hash, signature: signature as Hex });
    } catch {
      return undefined;
    }
  }

  it("recovers the signer of an EIP-712 digest as viem does, the high-s twin included, and malformed ones alike", async () => {
    for (let i = 0; i < 10; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const signature = await account.signTypedData(typedData(i));
      const hash = hashTypedData(typedData(i));
      const { r, s, v } = parts(signature);
      const twin = join(r, N - s, v === 27 ? 28 : 27);
      for (const variant of [signature, join(r, s, v - 27), twin]) {
        expect(await recoverHashSigner(hash, variant)).toBe(account.address);
        expect(await viemHash(hash, variant)).toBe(account.address);
      }
      expect(await recoverHashSigner(hashTypedData(typedData(i + 1)), signature)).not.toBe(account.address);
      for (const variant of [join(r, s, 29), join(0n, s, v), join(r, N, v), signature.slice(0, 130), "0x"]) {
        expect({ variant, ours: await recoverHashSigner(hash, variant) }).toEqual({
          variant,
          ours: await viemHash(hash, variant),
        });
      }
    }
  });
});

describe("keccak256 and hashPersonalMessage", () => {
  it("are viem's keccak256 and hashMessage", () => {
    for (const text of ["", "hello", "challenge ✓ für\nNonce: 1", "\u{1F600}".repeat(40), "x".repeat(300)]) {
      expect(`0x${keccak256(text).toString("hex")}`).toBe(viemKeccak(stringToBytes(text)));
      expect(`0x${hashPersonalMessage(text).toString("hex")}`).toBe(hashMessage(text));
    }
  });
});
