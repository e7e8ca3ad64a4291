import type { PaymentRequirements } from "@x402/core/types";
import { authorizationTypes } from "@x402/evm";
import { type Hex, isAddressEqual, recoverTypedDataAddress } from "viem";
/** An EIP-3009 `transferWithAuthorization` as x402's `exact` payload carries it. */
export type Authorization = {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
};

const CHAIN_ID = /^eip155:([0-9]{1,15})$/;

/**
 * Whether the EIP-3009 authorization carries its payer's own signature over the tier's token domain, checked
 * locally (no RPC), so that a forgery costs neither a registry lookup nor a facilitator call. A signature that
 * only a contract wallet could vouch for (EIP-1271) does not pass: the gateway takes 65-byte ECDSA signatures only.
 * The token's EIP-712 name and version come from the tier, as x402's client signs with them.
 */
export async function signedByPayer(
  authorization: Authorization,
  signature: string,
  requirements: Pick<PaymentRequirements, "network" | "asset" | "extra">,
): Promise<boolean> {
  const { name, version } = (requirements.extra ?? {}) as { name?: unknown; version?: unknown };
  const chain = CHAIN_ID.exec(requirements.network);
  if (typeof name !== "string" || typeof version !== "string" || !chain) return false;
  try {
    const signer = await recoverTypedDataAddress({
      domain: { name, version, chainId: Number(chain[1]), verifyingContract: requirements.asset as Hex },
      types: authorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: {
        from: authorization.from as Hex,
        to: authorization.to as Hex,
        value: BigInt(authorization.value),
        validAfter: BigInt(authorization.validAfter),
        validBefore: BigInt(authorization.validBefore),
        nonce: authorization.nonce as Hex,
      },
      signature: signature as Hex,
    });
    return isAddressEqual(signer, authorization.from as Hex);
  } catch {
    // Not a signature at all (r or s out of range, v unknown).
    return false;
  }
}
