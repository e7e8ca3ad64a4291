import { hash as digestOf, getHashes } from "node:crypto";
import { createRequire } from "node:module";
import { type Hex, isHex, recoverAddress, keccak256 as scriptKeccak256 } from "viem";

/** The documented API of the `secp256k1` package: libsecp256k1's prebuilt binding, its own JavaScript elsewhere. */
type Secp256k1 = {
  ecdsaRecover(signature: Uint8Array, recid: number, message: Uint8Array, compressed: boolean): Uint8Array;
};

// libsecp256k1 recovers a key many times faster than viem's JavaScript curve, and recovery (the proof's and the
// EIP-3009 authorization's) was most of the CPU a human proof cost the gateway (bench/payment-gateway, human tier).
const secp256k1 = createRequire(import.meta.url)("secp256k1") as Secp256k1;

// Half the secp256k1 group order: EIP-2 allows only signatures with s at most this, so that no signature has
// a second valid form a relay could substitute.
const HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

// OpenSSL has Keccak-256 from 3.2 on (Node 24 and later); the OpenSSL 3.0 of Node 22, the lowest line this SDK
// supports, has SHA-3 only, so there viem's JavaScript Keccak does it.
const opensslKeccak = getHashes().includes("keccak-256");

/**
 * Keccak-256 (Ethereum's, not SHA3-256) of `data`, a string as its UTF-8 bytes. OpenSSL's: a few µs where viem's
 * JavaScript Keccak took tens, and a human request hashes five times (two recoveries, two checksums, the
 * EIP-3009 digest).
 */
export function keccak256(data: Uint8Array | string): Buffer {
  if (opensslKeccak) return digestOf("keccak-256", data, "buffer");
  return Buffer.from(scriptKeccak256(typeof data === "string" ? Buffer.from(data) : data, "bytes"));
}

/** The EIP-191 (`personal_sign`) digest of `message`: viem's `hashMessage`. */
export function hashPersonalMessage(message: string): Buffer {
  return keccak256(`\x19Ethereum Signed Message:\n${Buffer.byteLength(message)}${message}`);
}

/** The EIP-55 checksummed form of a 40-digit hex address (no `0x`): viem's `checksumAddress`. */
function checksummed(hex: string): `0x${string}` {
  const lower = hex.toLowerCase();
  const nibbles = keccak256(lower).toString("hex");
  let out = "0x";
  for (let i = 0; i < 40; i++)
    out += Number.parseInt(nibbles[i] as string, 16) >= 8 ? lower[i]?.toUpperCase() : lower[i];
  return out as `0x${string}`;
}

/** The `s` of a 65-byte (r, s, v) or 64-byte EIP-2098 (r, yParity|s) signature. */
function sOf(signature: string): bigint {
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  return signature.length === 130 ? s & ((1n << 255n) - 1n) : s;
}

/**
 * The address that signed `message` with EIP-191 (`personal_sign`), checksummed (EIP-55), or undefined when no
 * signer can be recovered from `signature` or its `s` is in the upper half of the curve order (EIP-2). Same answers
 * as viem's `recoverMessageAddress` otherwise, which handles the 64-byte EIP-2098 form.
 */
export async function recoverMessageSigner(
  message: string,
  signature: string | undefined,
): Promise<`0x${string}` | undefined> {
  if (!signature || !isHex(signature)) return undefined;
  if ((signature.length === 132 || signature.length === 130) && sOf(signature) > HALF_ORDER) return undefined;
  return recoverHashSigner(hashPersonalMessage(message), signature);
}

/**
 * The address whose key made `signature` over the 32-byte digest `hash` (an EIP-712 `hashTypedData`, an EIP-191
 * `hashMessage`; hex or bytes), checksummed, or undefined when none can be recovered. Same answers as viem's
 * `recoverAddress`, which it leaves the 64-byte EIP-2098 form to; like it, and like `ecrecover`, it accepts a
 * high `s`.
 */
export async function recoverHashSigner(
  hash: Hex | Uint8Array,
  signature: string | undefined,
): Promise<`0x${string}` | undefined> {
  if (!signature || !isHex(signature)) return undefined;
  try {
    const digest = typeof hash === "string" ? hexBytes(hash) : hash;
    if (signature.length !== 132)
      return await recoverAddress({
        hash: `0x${Buffer.from(digest).toString("hex")}`,
        signature: signature as Hex,
      });
    const bytes = hexBytes(signature);
    const v = bytes[64] as number;
    const recoveryId = v >= 27 ? v - 27 : v;
    if (recoveryId !== 0 && recoveryId !== 1) return undefined;
    const key = secp256k1.ecdsaRecover(bytes.subarray(0, 64), recoveryId, digest, false);
    return checksummed(keccak256(key.subarray(1)).toString("hex", 12));
  } catch {
    return undefined;
  }
}

/** The bytes of a `0x` hex string; throws on anything else, as viem's `hexToBytes` does. */
function hexBytes(hex: string): Buffer {
  if (!isHex(hex, { strict: true }) || hex.length % 2) throw new Error(`not hex bytes: ${hex}`);
  return Buffer.from(hex.slice(2), "hex");
}
