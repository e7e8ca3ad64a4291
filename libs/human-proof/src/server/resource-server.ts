import { x402ResourceServer } from "@x402/core/server";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { HUMAN_PROOF } from "../common/constants.ts";

function withoutHumanProofEcho(paymentPayload: PaymentPayload): PaymentPayload {
  const extensions = paymentPayload.extensions;
  if (!extensions || !(HUMAN_PROOF in extensions)) return paymentPayload;
  const { [HUMAN_PROOF]: _proof, ...others } = extensions;
  return { ...paymentPayload, extensions: others };
}

/**
 * The `x402ResourceServer` to construct (in its place, same arguments) for `configureHumanProofServer`. It differs
 * in one thing: x402's generic extension echo check is not applied to `extensions["human-proof"]`, which the
 * before-verify hook checks itself, answering with the precise reason. Billions' client sends the proof as a JSON
 * string, which the generic check (comparing the echo with the challenge's `info`) would always refuse as
 * `extension_echo_mismatch`, and `@x402/core` has no hook or extension setting that runs before that check. Every
 * other extension's echo is checked as x402 does.
 */
export class HumanProofResourceServer extends x402ResourceServer {
  override validateExtensions(paymentRequired: PaymentRequired, paymentPayload: PaymentPayload) {
    return super.validateExtensions(paymentRequired, withoutHumanProofEcho(paymentPayload));
  }
}
