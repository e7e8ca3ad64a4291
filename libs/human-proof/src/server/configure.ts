import type { x402ResourceServer } from "@x402/core/server";
import type { PaymentPayload } from "@x402/core/types";
import { HUMAN_PROOF } from "../common/constants.ts";
import { assertX402Versions } from "../common/x402-versions.ts";
import { createChallengeNonces } from "./challenge-nonces.ts";
import { type CreateHumanProofExtensionOptions, createHumanProofExtension } from "./extension.ts";
import {
  type CreateVerifyHumanProofHookOptions,
  createAfterVerifyFailureRollbackHook,
  createSettleFailureRollbackHook,
  createVerifiedPaymentCanceledRollbackHook,
  createVerifyFailureRollbackHook,
  createVerifyHumanProofHook,
} from "./hooks.ts";
import { createPoUVerifier } from "./verifier.ts";

export type ConfigureHumanProofServerOptions = CreateVerifyHumanProofHookOptions & {
  extensionOptions?: CreateHumanProofExtensionOptions;
};

function withoutHumanProofEcho(paymentPayload: PaymentPayload): PaymentPayload {
  const extensions = paymentPayload.extensions;
  if (!extensions || !(HUMAN_PROOF in extensions)) return paymentPayload;
  const { [HUMAN_PROOF]: _proof, ...others } = extensions;
  return { ...paymentPayload, extensions: others };
}

/**
 * Registers the human-proof extension and the before-verify hook on an x402 resource server; with `storage`
 * also the rollback hooks (invalid verify, verify error, settle failure, canceled verified payment).
 * Call once, before routes are served.
 *
 * x402's generic echo check is not applied to `extensions["human-proof"]`: the hook checks the signed terms
 * itself and answers with the precise reason, and Billions' client sends the proof as a JSON string, which
 * the generic check would always refuse as `extension_echo_mismatch`.
 */
export function configureHumanProofServer(
  server: x402ResourceServer,
  options: ConfigureHumanProofServerOptions = {},
): void {
  assertX402Versions();
  const { extensionOptions, verifierOptions, storage, ...hookOptions } = options;
  const verifier = options.verifier ?? createPoUVerifier(verifierOptions ?? {});
  const agentOwnershipSchema = extensionOptions?.agentOwnershipSchema ?? verifier.ownershipSchema;
  if (agentOwnershipSchema !== verifier.ownershipSchema) {
    throw new Error(
      `extensionOptions.agentOwnershipSchema ${agentOwnershipSchema} differs from the verifier's ${verifier.ownershipSchema}`,
    );
  }

  const challengeNonces =
    hookOptions.challengeNonces ?? extensionOptions?.challengeNonces ?? createChallengeNonces();
  server.registerExtension(createHumanProofExtension({ agentOwnershipSchema, challengeNonces }));
  server.onBeforeVerify(createVerifyHumanProofHook({ ...hookOptions, challengeNonces, verifier, storage }));
  if (storage) {
    server.onAfterVerify(createAfterVerifyFailureRollbackHook({ storage }));
    server.onVerifyFailure(createVerifyFailureRollbackHook({ storage }));
    server.onSettleFailure(createSettleFailureRollbackHook({ storage }));
    server.onVerifiedPaymentCanceled(createVerifiedPaymentCanceledRollbackHook({ storage }));
  }

  const validateExtensions = server.validateExtensions.bind(server);
  server.validateExtensions = (paymentRequired, paymentPayload) =>
    validateExtensions(paymentRequired, withoutHumanProofEcho(paymentPayload));
}
