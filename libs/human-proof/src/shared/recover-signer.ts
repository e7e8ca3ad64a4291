import { type Hex, isHex, recoverMessageAddress } from "viem";

// Half the secp256k1 group order: EIP-2 allows only signatures with s at most this, so that no signature has
// a second valid form a relay could substitute.
const HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/** The `s` of a 65-byte (r, s, v) or 64-byte EIP-2098 (r, yParity|s) signature. */
function sOf(signature: string): bigint {
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  return signature.length === 130 ? s & ((1n << 255n) - 1n) : s;
}

/**
 * The address that signed `message` with EIP-191 (`personal_sign`), checksummed (EIP-55), or undefined when no
 * signer can be recovered from `signature` or its `s` is in the upper half of the curve order (EIP-2), which
 * viem's `recoverMessageAddress` alone would accept.
 */
export async function recoverMessageSigner(
  message: string,
  signature: string | undefined,
): Promise<`0x${string}` | undefined> {
  if (!signature || !isHex(signature)) return undefined;
  if ((signature.length === 132 || signature.length === 130) && sOf(signature) > HALF_ORDER) return undefined;
  try {
    return await recoverMessageAddress({ message, signature: signature as Hex });
  } catch {
    return undefined;
  }
}
