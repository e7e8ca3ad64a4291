import { createRequire } from "node:module";
import { type Hex, isHex, recoverMessageAddress } from "viem";

type NativeSecp256k1 = {
  ecdsaRecover(signature: Uint8Array, recoveryId: number, hash: Uint8Array, compressed: boolean): Uint8Array;
};
type NativeKeccak = (algorithm: "keccak256") => { update(data: Buffer | string): { digest(): Buffer } };

// libsecp256k1 recovers a key several times faster than viem's JavaScript curve, and the native Keccak hashes six
// times faster than viem's: together they are most of the CPU a human proof costs. Both bindings ship prebuilt
// for the usual platforms; elsewhere viem does the work.
function loadNative(): { secp256k1: NativeSecp256k1; keccak: NativeKeccak } | undefined {
  try {
    const require = createRequire(import.meta.url);
    return {
      secp256k1: require("secp256k1/bindings") as NativeSecp256k1,
      keccak: require("keccak/bindings") as NativeKeccak,
    };
  } catch {
    return undefined;
  }
}

const native = loadNative();

// Half the secp256k1 group order: EIP-2 allows only signatures with s at most this, so that no signature has
// a second valid form a relay could substitute.
const HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/** The `s` of a 65-byte (r, s, v) or 64-byte EIP-2098 (r, yParity|s) signature. */
function sOf(signature: string): bigint {
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  return signature.length === 130 ? s & ((1n << 255n) - 1n) : s;
}

export const nativeRecovery = native !== undefined;

const keccak256 = (data: Buffer | string) => native!.keccak("keccak256").update(data).digest();

// viem's hashMessage, without its round trips through hex text.
function eip191Hash(message: string): Uint8Array {
  const body = Buffer.from(message, "utf8");
  const prefix = Buffer.from(`\x19Ethereum Signed Message:\n${body.length}`, "utf8");
  return keccak256(Buffer.concat([prefix, body]));
}

// EIP-55, as viem's getAddress writes it.
function checksummed(lowercaseHex: string): `0x${string}` {
  const hash = keccak256(lowercaseHex);
  let out = "0x";
  for (let i = 0; i < 40; i++) {
    const nibble = ((hash[i >> 1] as number) >> (i % 2 === 0 ? 4 : 0)) & 0xf;
    out += nibble >= 8 ? (lowercaseHex[i] as string).toUpperCase() : lowercaseHex[i];
  }
  return out as `0x${string}`;
}

/**
 * The address that signed `message` with EIP-191 (`personal_sign`), or undefined when no signer can be
 * recovered from `signature` or its `s` is in the upper half of the curve order (EIP-2). Same answers as viem's `recoverMessageAddress`, which handles every form the
 * fast path does not (64-byte EIP-2098 signatures, no binding).
 */
export async function recoverMessageSigner(
  message: string,
  signature: string | undefined,
): Promise<`0x${string}` | undefined> {
  if (!signature || !isHex(signature)) return undefined;
  if ((signature.length === 132 || signature.length === 130) && sOf(signature) > HALF_ORDER) return undefined;
  try {
    if (native && signature.length === 132) {
      const bytes = Buffer.from(signature.slice(2), "hex");
      const v = bytes[64] as number;
      const recoveryId = v >= 27 ? v - 27 : v;
      if (recoveryId !== 0 && recoveryId !== 1) return undefined;
      const publicKey = native.secp256k1.ecdsaRecover(
        bytes.subarray(0, 64),
        recoveryId,
        eip191Hash(message),
        false,
      );
      const key = Buffer.from(publicKey.buffer, publicKey.byteOffset + 1, 64);
      return checksummed(keccak256(key).subarray(12).toString("hex"));
    }
    return await recoverMessageAddress({ message, signature: signature as Hex });
  } catch {
    return undefined;
  }
}
