import type {
  AfterVerifyHook,
  BeforeVerifyHook,
  OnSettleFailureHook,
  OnVerifiedPaymentCanceledHook,
  OnVerifyFailureHook,
  VerifyContext,
} from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { HUMAN_PROOF } from "../common/constants.ts";
import { eventsOf, refundThrough, sequentialAdmissions } from "./admissions.ts";
import { type ChallengeNonces, createChallengeNonces } from "./challenge-nonces.ts";
import { expectedSigningTerms } from "./extension.ts";
import { InMemoryUsedNonceStore } from "./memory-stores.ts";
import { admittedProofNonceOf, proofText, requiredAttestationsOf } from "./payment-proof.ts";
import type {
  HumanProofEvent,
  HumanUsageStorage,
  OnHumanProofEvent,
  PoUVerifier,
  PoUVerifierOptions,
  ProofAdmission,
  ProofAdmissions,
  UsedNonceStore,
} from "./types.ts";
import { createPoUVerifier } from "./verifier.ts";
import { type HumanProofRefusalReason, parseIsoDate, verifyProof } from "./verify-request.ts";

/** Every reason the before-verify hook can abort with (x402 puts it in the 402's payment-required `error`). */
export type HumanProofHookReason =
  | HumanProofRefusalReason
  | "missing_required_attestation"
  | "verifier_cannot_check_attestations"
  | "invalid_max_use_value"
  | "misconfigured_max_use_storage"
  | "max_use_exceeded"
  /** The proof's `domain` is not this server's. */
  | "wrong_domain_or_resource"
  /** The proof's nonce was not issued by this server for these terms, or was already used. */
  | "unknown_or_expired_nonce"
  /** The proof's `chainId` is not one the challenge offered. */
  | "unsupported_chain"
  /** The x402 payer is not the proof's signer (and the route does not allow it). */
  | "payer_not_signer"
  /** The attestations API, the nullifier API or the storage failed: not verified, retry later. */
  | "verification_unavailable";

export type CreateVerifyHumanProofHookOptions = {
  verifier?: PoUVerifier;
  verifierOptions?: PoUVerifierOptions;
  onEvent?: OnHumanProofEvent;
  /** Required when any `accepts` entry sets `extra.maxUse`, unless `admissions` takes the uses. */
  storage?: HumanUsageStorage;
  /** Where used nonces are remembered; default an in-memory store (one process only, development). */
  nonceStore?: UsedNonceStore;
  /**
   * Takes nonce, use and events in one atomic step, and gives a failed request's use back (`refund`); default
   * `nonceStore`, then `storage`, one after another.
   */
  admissions?: ProofAdmissions;
  /**
   * Recognises the nonces of the challenges this server issued; must be the extension's. Default: nonces only
   * this process recognises (`configureHumanProofServer` hands the same one to both).
   */
  challengeNonces?: ChallengeNonces;
  /** Nonce lifetime: oldest `issuedAt` accepted, whatever `expirationTime` the agent sent. Default 300 (spec 3). */
  maxProofAgeSeconds?: number;
};

export const DEFAULT_MAX_PROOF_AGE_SECONDS = 300;
// Tolerated client clock lead for `issuedAt`.
const CLOCK_SKEW_MS = 60_000;

// A store's own `paymentRefusal` passes through as it is.
type HookResult = { abort: true; reason: HumanProofHookReason | (string & {}); message?: string } | undefined;

/** The payer an EVM `exact` payload names (EIP-3009 or Permit2 authorization), if any. */
function payerOf(payload: unknown): string | undefined {
  const { authorization, permit2Authorization } = (payload ?? {}) as {
    authorization?: { from?: unknown };
    permit2Authorization?: { from?: unknown };
  };
  const from = authorization?.from ?? permit2Authorization?.from;
  return typeof from === "string" ? from : undefined;
}

function abort(reason: HumanProofHookReason, message?: string): HookResult {
  return message ? { abort: true, reason, message } : { abort: true, reason };
}

type Verdict = { refusal: HumanProofHookReason } | { use?: NonNullable<ProofAdmission["use"]> };

/**
 * The x402 before-verify hook. Skips tiers without `extra.requiredAttestations`; otherwise checks everything
 * `verifyHumanProofRequest` checks, plus the signed `domain`, the proof's age and single use of its nonce,
 * extra schemas, and the per-human `maxUse` quota (given back by the rollback hooks).
 * Once the signature and the signed terms are good the nonce is spent whatever the outcome, in the same
 * admission step that takes the use and records the events, after the registry was asked; a proof that passed
 * every check offers the store its payment to claim in that step too (`ProofAdmission.payment`).
 */
export function createVerifyHumanProofHook(
  options: CreateVerifyHumanProofHookOptions = {},
): BeforeVerifyHook {
  const { onEvent, storage } = options;
  const verifier = options.verifier ?? createPoUVerifier(options.verifierOptions ?? {});
  const admissions =
    options.admissions ??
    sequentialAdmissions({ nonceStore: options.nonceStore ?? new InMemoryUsedNonceStore(), storage });
  const maxAgeMs = (options.maxProofAgeSeconds ?? DEFAULT_MAX_PROOF_AGE_SECONDS) * 1000;
  const nonces = options.challengeNonces ?? createChallengeNonces();

  async function check(context: VerifyContext, required: string[]): Promise<HookResult> {
    const { paymentPayload, requirements } = context;
    const declared = context.declaredExtensions?.[HUMAN_PROOF];
    const expected = expectedSigningTerms(declared, paymentPayload.resource?.url ?? "");
    const events: HumanProofEvent[] = [];
    let signed: Pick<ProofAdmission, "nonce" | "nonceExpiresAt"> | undefined;

    async function judge(): Promise<Verdict> {
      const result = await verifyProof<HumanProofHookReason>(
        verifier,
        {
          resource: expected.uri,
          humanProofHeader: proofText(paymentPayload.extensions?.[HUMAN_PROOF]),
          // Held back until the admission says the nonce was fresh: a replayed proof reports nothing.
          onEvent: (event) => {
            events.push(event);
          },
        },
        // Everything here is decided without storage or registry, so a forged or foreign proof costs neither.
        async (proof, signer) => {
          if (proof.domain !== expected.domain) return "wrong_domain_or_resource";
          if (proof.version !== expected.version) return "invalid_message";
          if (!(expected.chains ?? [requirements.network]).includes(proof.chainId))
            return "unsupported_chain";
          const issuedAt = parseIsoDate(proof.issuedAt) as number;
          const now = Date.now();
          if (issuedAt > now + CLOCK_SKEW_MS) return "invalid_issued_at";
          if (now - issuedAt > maxAgeMs) return "message_expired";
          // The nonce carries the issue time it was bound to: a proof cannot move it to stretch its lifetime.
          const issued = nonces.issuedAt(proof.nonce, { domain: proof.domain, uri: proof.uri as string });
          if (issued === undefined || new Date(issued).toISOString() !== proof.issuedAt)
            return "unknown_or_expired_nonce";
          const payer = payerOf(paymentPayload.payload);
          if (!expected.payerMayDiffer && payer?.toLowerCase() !== signer.toLowerCase())
            return "payer_not_signer";
          signed = { nonce: proof.nonce, nonceExpiresAt: new Date(issuedAt + maxAgeMs) };
          return undefined;
        },
      );
      if (!result.allowed) return { refusal: result.reason };
      const { did, chainId, resolution } = result;

      const extraSchemas = required.filter((schema) => schema !== verifier.ownershipSchema);
      if (extraSchemas.length) {
        if (!verifier.hasAttestation) return { refusal: "verifier_cannot_check_attestations" };
        for (const schema of extraSchemas) {
          if (!(await verifier.hasAttestation(did, chainId, schema)))
            return { refusal: "missing_required_attestation" };
        }
      }

      const extra = requirements.extra as Record<string, unknown> | undefined;
      const maxUse = extra?.maxUse;
      if (maxUse === undefined) return {};
      if (typeof maxUse !== "number" || !Number.isSafeInteger(maxUse) || maxUse < 1)
        return { refusal: "invalid_max_use_value" };
      if (!storage && !options.admissions) return { refusal: "misconfigured_max_use_storage" };
      const scope = typeof extra?.scope === "string" && extra.scope ? extra.scope : expected.uri;
      return { use: { humanId: resolution.humanId, maxUse, scope } };
    }

    let verdict: Verdict;
    try {
      verdict = await judge();
    } catch (error) {
      // The registry could not be asked: the proof is spent all the same.
      if (signed) await admissions.admit({ ...signed, resource: expected.uri, events: [] });
      throw error;
    }
    if (!signed) return "refusal" in verdict ? abort(verdict.refusal) : undefined;

    const admission: ProofAdmission = {
      ...signed,
      resource: expected.uri,
      events,
      ...("use" in verdict ? { use: verdict.use } : {}),
      ...("refusal" in verdict ? {} : { payment: { payload: paymentPayload, requirements } }),
    };
    const { nonceFresh, count, paymentRefusal } = await admissions.admit(admission);
    if (!nonceFresh) return abort("unknown_or_expired_nonce");
    const { use } = admission;
    try {
      for (const event of eventsOf(admission, count)) await onEvent?.(event);
    } catch (error) {
      if (count !== null) await admissions.refund(admission.nonce);
      throw error;
    }
    if ("refusal" in verdict) return abort(verdict.refusal);
    if (paymentRefusal) {
      if (count !== null) await admissions.refund(admission.nonce);
      return { abort: true, reason: paymentRefusal };
    }
    return use && count === null ? abort("max_use_exceeded") : undefined;
  }

  return async (context) => {
    const required = requiredAttestationsOf(context.requirements.extra);
    if (!required.length) return;
    try {
      return await check(context, required);
    } catch (error) {
      // x402 only logs a before-verify hook that throws and lets the payment through: refuse here instead.
      return abort("verification_unavailable", error instanceof Error ? error.message : String(error));
    }
  };
}

/**
 * What the rollback hooks give a use back through: the `admissions` store that took it (by the proof's nonce, as
 * it recorded it), or, in a `storage`-only set-up as Billions' hooks take it, the storage.
 * `verifier` is accepted for call compatibility with Billions' package.
 */
export type RollbackHookOptions =
  | { storage: HumanUsageStorage; admissions?: ProofAdmissions; verifier?: PoUVerifier }
  | { storage?: HumanUsageStorage; admissions: ProofAdmissions; verifier?: PoUVerifier };
export type CreateAfterVerifyFailureRollbackHookOptions = RollbackHookOptions;
export type CreateVerifyFailureRollbackHookOptions = RollbackHookOptions;
export type CreateSettleFailureRollbackHookOptions = RollbackHookOptions;
export type CreateVerifiedPaymentCanceledRollbackHookOptions = RollbackHookOptions;

/**
 * Gives back the use this payment's proof took, if it took one, once: found by the proof's nonce, so any copy
 * of the payload finds it; only for a payment of a human tier, the only one whose request admitted its proof.
 */
function refunder({ storage, admissions }: RollbackHookOptions) {
  return async ({
    paymentPayload,
    requirements,
  }: {
    paymentPayload: Pick<PaymentPayload, "extensions">;
    requirements: Pick<PaymentRequirements, "extra">;
  }) => {
    const nonce = admittedProofNonceOf(paymentPayload, requirements);
    if (nonce === undefined) return;
    if (admissions) await admissions.refund(nonce);
    else if (storage) await refundThrough(storage, nonce);
  };
}

/** `onAfterVerify`: the facilitator found the payment invalid; give the quota back. */
export function createAfterVerifyFailureRollbackHook(options: RollbackHookOptions): AfterVerifyHook {
  const refund = refunder(options);
  return async (context) => {
    if (context.result.isValid === false) await refund(context);
  };
}

/** `onVerifyFailure`: verification threw; give the quota back. */
export function createVerifyFailureRollbackHook(options: RollbackHookOptions): OnVerifyFailureHook {
  const refund = refunder(options);
  return async (context) => {
    await refund(context);
  };
}

/** `onSettleFailure`: settlement failed after verification passed; give the quota back. */
export function createSettleFailureRollbackHook(options: RollbackHookOptions): OnSettleFailureHook {
  const refund = refunder(options);
  return async (context) => {
    await refund(context);
  };
}

/** `onVerifiedPaymentCanceled`: the handler failed (or an after-verify hook aborted) after verification; give the quota back. */
export function createVerifiedPaymentCanceledRollbackHook(
  options: RollbackHookOptions,
): OnVerifiedPaymentCanceledHook {
  const refund = refunder(options);
  return async (context) => {
    await refund(context);
  };
}
