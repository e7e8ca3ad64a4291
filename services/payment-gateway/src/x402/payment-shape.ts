import type { BeforeVerifyHook } from "@x402/core/server";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^[0-9]{1,78}$/;
const NONCE = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;

/** The reason a payment whose EIP-3009 authorization cannot pay the chosen tier is refused with. */
export const MALFORMED_PAYMENT = "invalid_payment_payload";

type Authorization = {
  from?: unknown;
  to?: unknown;
  value?: unknown;
  validAfter?: unknown;
  validBefore?: unknown;
  nonce?: unknown;
};

/**
 * Refuses, before anything costly (the human lookup, the facilitator), an `exact` EVM payment whose EIP-3009
 * authorization is malformed or cannot pay the tier: wrong recipient or amount, or already past `validBefore`.
 * Permit2 payloads are left to the facilitator. Registered ahead of the human-proof hook.
 */
export const refuseMalformedPayment: BeforeVerifyHook = async ({ paymentPayload, requirements }) => {
  const payload = paymentPayload.payload as
    | { authorization?: Authorization; signature?: unknown }
    | undefined;
  if (requirements.scheme !== "exact" || !requirements.network.startsWith("eip155:")) return;
  if (payload && "permit2Authorization" in payload) return;
  const a = payload?.authorization;
  const wellFormed =
    a !== undefined &&
    typeof a.from === "string" &&
    ADDRESS.test(a.from) &&
    typeof a.to === "string" &&
    ADDRESS.test(a.to) &&
    [a.value, a.validAfter, a.validBefore].every((v) => typeof v === "string" && UINT.test(v)) &&
    typeof a.nonce === "string" &&
    NONCE.test(a.nonce) &&
    typeof payload?.signature === "string" &&
    SIGNATURE.test(payload.signature);
  if (!wellFormed) return { abort: true, reason: MALFORMED_PAYMENT };
  const paysTier =
    (a.to as string).toLowerCase() === requirements.payTo.toLowerCase() &&
    a.value === requirements.amount &&
    BigInt(a.validBefore as string) > BigInt(Math.floor(Date.now() / 1000));
  return paysTier ? undefined : { abort: true, reason: MALFORMED_PAYMENT };
};
