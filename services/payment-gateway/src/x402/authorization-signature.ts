import { type Authorization, MALFORMED_PAYMENT, recoverHashSigner } from "@humanpass/human-proof";
import type { BeforeVerifyHook } from "@x402/core/server";
import type { PaymentRequirements } from "@x402/core/types";
import { type Hex, isAddressEqual } from "viem";
import { transferAuthorizationDigest } from "./transfer-digest.ts";

const CHAIN_ID = /^eip155:([0-9]{1,15})$/;

/**
 * On tiers that look the agent's human up (`extra.requiredAttestations`): refuses an EIP-3009 authorization that
 * its payer did not sign before that lookup, so a forgery from a fresh key costs no registry request. Registered
 * after the SDK's `refuseMalformedPayment` (which leaves only well-formed authorizations) and before the
 * human-proof hook.
 * Other tiers leave the signature to the facilitator, which checks it before settling anything.
 */
export const refuseForgedAuthorizationBeforeLookup: BeforeVerifyHook = async ({
  paymentPayload,
  requirements,
}) => {
  const required = (requirements.extra as { requiredAttestations?: unknown } | undefined)
    ?.requiredAttestations;
  if (!Array.isArray(required) || required.length === 0) return;
  const { authorization, signature } = (paymentPayload.payload ?? {}) as {
    authorization?: Authorization;
    signature?: unknown;
  };
  const signed =
    authorization !== undefined &&
    typeof signature === "string" &&
    (await signedByPayer(authorization, signature, requirements));
  return signed ? undefined : { abort: true, reason: MALFORMED_PAYMENT };
};

/**
 * Whether the EIP-3009 authorization carries its payer's own signature over the tier's token domain, checked
 * locally (no RPC). A signature that only a contract wallet could vouch for (EIP-1271) does not pass; the payer of
 * a human tier is the proof's signer, a key, unless the route lets the payer differ.
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
    const digest = transferAuthorizationDigest(
      { name, version, chainId: Number(chain[1]), verifyingContract: requirements.asset },
      authorization,
    );
    const signer = await recoverHashSigner(digest, signature);
    return signer !== undefined && isAddressEqual(signer, authorization.from as Hex);
  } catch {
    // A field out of its EIP-712 type, or not a signature at all (r or s out of range, v unknown).
    return false;
  }
}
