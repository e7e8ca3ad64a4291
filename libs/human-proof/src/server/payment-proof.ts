import type { PaymentPayload } from "@x402/core/types";
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
