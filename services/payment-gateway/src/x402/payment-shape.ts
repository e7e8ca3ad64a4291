import type { BeforeVerifyHook } from "@x402/core/server";
import { isPermit2Payload } from "@x402/evm";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^[0-9]{1,78}$/;
const NONCE = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;

/** The reason a payment whose EIP-3009 authorization cannot pay the chosen tier is refused with. */
export const MALFORMED_PAYMENT = "invalid_payment_payload";

/** The reason a payment of a kind no tier offers (Permit2) is refused with: x402's own code for it. */
export const UNOFFERED_PAYMENT = "unsupported_payload_type";

/** An EIP-3009 `transferWithAuthorization` as x402's `exact` payload carries it. */
export type Authorization = {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
};

/**
 * Refuses, before anything costly (the human lookup, the facilitator), an `exact` EVM payment that cannot pay
 * the chosen tier: a Permit2 payload (every tier offers EIP-3009 only, and x402's facilitator would take the
 * payload's own word for its kind), or an EIP-3009 authorization that is malformed, pays the wrong recipient or
 * amount, or is past `validBefore`. Registered first, ahead of the human-proof hook.
 */
export const refuseMalformedPayment: BeforeVerifyHook = async ({ paymentPayload, requirements }) => {
  if (requirements.scheme !== "exact" || !requirements.network.startsWith("eip155:")) return;
  const payload = paymentPayload.payload as
    | { authorization?: Record<string, unknown>; signature?: unknown }
    | undefined;
  if (typeof payload === "object" && payload !== null && isPermit2Payload(payload as never))
    return { abort: true, reason: UNOFFERED_PAYMENT };
  const a = payload?.authorization;
  const signature = payload?.signature;
  if (!isAuthorization(a) || typeof signature !== "string" || !SIGNATURE.test(signature))
    return { abort: true, reason: MALFORMED_PAYMENT };
  const paysTier =
    a.to.toLowerCase() === requirements.payTo.toLowerCase() &&
    a.value === requirements.amount &&
    BigInt(a.validBefore) > BigInt(Math.floor(Date.now() / 1000));
  return paysTier ? undefined : { abort: true, reason: MALFORMED_PAYMENT };
};

function isAuthorization(a: Record<string, unknown> | undefined): a is Authorization {
  return (
    a !== undefined &&
    typeof a.from === "string" &&
    ADDRESS.test(a.from) &&
    typeof a.to === "string" &&
    ADDRESS.test(a.to) &&
    [a.value, a.validAfter, a.validBefore].every((v) => typeof v === "string" && UINT.test(v)) &&
    typeof a.nonce === "string" &&
    NONCE.test(a.nonce)
  );
}
