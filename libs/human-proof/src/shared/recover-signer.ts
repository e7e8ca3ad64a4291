import { createRequire } from "node:module";
import { getAddress, type Hex, isHex, keccak256, recoverMessageAddress } from "viem";

type NativeSecp256k1 = {
  ecdsaRecover(signature: Uint8Array, recoveryId: number, hash: Uint8Array, compressed: boolean): Uint8Array;
};

// libsecp256k1 recovers a key several times faster than viem's JavaScript curve, and recovery is most of the CPU
// a human proof costs. Its binding ships prebuilt for the usual platforms; elsewhere viem does the work.
function loadNative(): NativeSecp256k1 | undefined {
  try {
    return createRequire(import.meta.url)("secp256k1/bindings") as NativeSecp256k1;
  } catch {
    return undefined;
  }
}

const native = loadNative();

export const nativeRecovery = native !== undefined;

// viem's hashMessage, without its round trips through hex text.
function eip191Hash(message: string): Uint8Array {
  const body = Buffer.from(message, "utf8");
  const prefix = Buffer.from(`\x19Ethereum Signed Message:\n${body.length}`, "utf8");
  return keccak256(Buffer.concat([prefix, body]), "bytes");
}

/**
 * The address that signed `message` with EIP-191 (`personal_sign`), or undefined when no signer can be
 * recovered from `signature`. Same answers as viem's `recoverMessageAddress`, which handles every form the
 * fast path does not (64-byte EIP-2098 signatures, no binding).
 */
export async function recoverMessageSigner(
  message: string,
  signature: string | undefined,
): Promise<`0x${string}` | undefined> {
  if (!signature || !isHex(signature)) return undefined;
  try {
    if (native && signature.length === 132) {
      const bytes = Buffer.from(signature.slice(2), "hex");
      const v = bytes[64] as number;
      const recoveryId = v >= 27 ? v - 27 : v;
      if (recoveryId !== 0 && recoveryId !== 1) return undefined;
      const publicKey = native.ecdsaRecover(bytes.subarray(0, 64), recoveryId, eip191Hash(message), false);
      const hash = keccak256(publicKey.subarray(1), "bytes");
      return getAddress(`0x${Buffer.from(hash.subarray(12)).toString("hex")}`);
    }
    return await recoverMessageAddress({ message, signature: signature as Hex });
  } catch {
    return undefined;
  }
}
