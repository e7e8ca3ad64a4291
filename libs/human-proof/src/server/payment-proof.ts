import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { HUMAN_PROOF } from "../common/constants.ts";

/** The proof as JSON text: Billions' client sends the text itself, an x402 echo carries it as `info`. */
export function proofText(extension: unknown): string | null {
  if (extension === undefined || extension === null || extension === "") return null;
  if (typeof extension === "string") return extension;
  const info = (extension as { info?: unknown }).info;
  return JSON.stringify(typeof info === "object" && info !== null ? info : extension);
}

/**
 * The nonce of the human proof a payment carries, if it carries one: what the proof's admission stored its use
 * and its payment's claim under, so that every later step of the request finds them again from the payload's
 * content, whichever copy of the payload it is handed.
 */
export function proofNonceOf(paymentPayload: Pick<PaymentPayload, "extensions">): string | undefined {
  const text = proofText(paymentPayload.extensions?.[HUMAN_PROOF]);
  if (text === null) return undefined;
  try {
    const nonce = (JSON.parse(text) as { nonce?: unknown } | null)?.nonce;
    return typeof nonce === "string" && nonce !== "" ? nonce : undefined;
  } catch {
    return undefined;
  }
}

/** The attestations a tier requires (`extra.requiredAttestations`, one id or a list); none on a standard tier. */
export function requiredAttestationsOf(extra: unknown): string[] {
  const value = (extra as { requiredAttestations?: unknown } | undefined)?.requiredAttestations;
  if (typeof value === "string") return value ? [value] : [];
  return Array.isArray(value) ? value.filter((s): s is string => typeof s === "string" && s !== "") : [];
}

/**
 * The nonce of the proof a payment of a human tier carries: only such a payment passed the human-proof hook,
 * which admits each nonce once, so its request is the one whose admission took that nonce's use and claim. A
 * payment of another tier may carry any proof (x402 echoes the challenge), and names nothing.
 */
export function admittedProofNonceOf(
  paymentPayload: Pick<PaymentPayload, "extensions">,
  requirements: Pick<PaymentRequirements, "extra">,
): string | undefined {
  return requiredAttestationsOf(requirements.extra).length > 0 ? proofNonceOf(paymentPayload) : undefined;
}
