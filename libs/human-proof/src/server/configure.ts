import type { x402ResourceServer } from "@x402/core/server";
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
import { guardPayments, type PaymentGuardOptions } from "./payment-guards.ts";
import { HumanProofResourceServer } from "./resource-server.ts";
import { createPoUVerifier } from "./verifier.ts";

export type ConfigureHumanProofServerOptions = CreateVerifyHumanProofHookOptions & {
  extensionOptions?: CreateHumanProofExtensionOptions;
  /**
   * The payment guards (`guardPayments`): each payment claimed before its handler runs in `reservations`
   * (default: this process's), and a payment its tier cannot take refused first. `false` when the server
   * registers them itself (to put a hook of its own between them and the human-proof hook).
   */
  paymentGuards?: PaymentGuardOptions | false;
};

/**
 * Registers the payment guards, the human-proof extension and the before-verify hook on an x402 resource server;
 * with `storage` or `admissions` also the rollback hooks (invalid verify, verify error, settle failure, canceled
 * verified payment), which give a use back to the store that took it.
 * Call once, before routes are served. `server` must be a `HumanProofResourceServer` (an `x402ResourceServer` that
 * leaves the human-proof echo to the hook); nothing of it is replaced.
 */
export function configureHumanProofServer(
  server: x402ResourceServer,
  options: ConfigureHumanProofServerOptions = {},
): void {
  assertX402Versions();
  if (!(server instanceof HumanProofResourceServer)) {
    throw new TypeError(
      "configureHumanProofServer needs a HumanProofResourceServer (new HumanProofResourceServer(facilitator) in place of new x402ResourceServer(facilitator)): x402's generic echo check would refuse every human proof",
    );
  }
  const { extensionOptions, verifierOptions, storage, paymentGuards, ...hookOptions } = options;
  const verifier = options.verifier ?? createPoUVerifier(verifierOptions ?? {});
  const agentOwnershipSchema = extensionOptions?.agentOwnershipSchema ?? verifier.ownershipSchema;
  if (agentOwnershipSchema !== verifier.ownershipSchema) {
    throw new Error(
      `extensionOptions.agentOwnershipSchema ${agentOwnershipSchema} differs from the verifier's ${verifier.ownershipSchema}`,
    );
  }

  const challengeNonces =
    hookOptions.challengeNonces ?? extensionOptions?.challengeNonces ?? createChallengeNonces();
  if (paymentGuards !== false) guardPayments(server, paymentGuards);
  server.registerExtension(createHumanProofExtension({ agentOwnershipSchema, challengeNonces }));
  server.onBeforeVerify(createVerifyHumanProofHook({ ...hookOptions, challengeNonces, verifier, storage }));
  // The store that took a use gives it back: `admissions`, or the storage the default admissions took it through.
  const refunds = hookOptions.admissions ? { admissions: hookOptions.admissions } : storage && { storage };
  if (refunds) {
    server.onAfterVerify(createAfterVerifyFailureRollbackHook(refunds));
    server.onVerifyFailure(createVerifyFailureRollbackHook(refunds));
    server.onSettleFailure(createSettleFailureRollbackHook(refunds));
    server.onVerifiedPaymentCanceled(createVerifiedPaymentCanceledRollbackHook(refunds));
  }
}
