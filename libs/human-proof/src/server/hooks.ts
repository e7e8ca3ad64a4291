import type {
  AfterVerifyHook,
  BeforeVerifyHook,
  OnSettleFailureHook,
  OnVerifiedPaymentCanceledHook,
  OnVerifyFailureHook,
  VerifyContext,
} from "@x402/core/server";
import { HUMAN_PROOF } from "../shared/constants";
import { expectedSigningTerms } from "./extension";
import { InMemoryNonceStore } from "./memory-stores";
import type {
  HumanUsageStorage,
  NonceStore,
  OnHumanProofEvent,
  PoUVerifier,
  PoUVerifierOptions,
} from "./types";
import { recordReservation, releaseReservation } from "./usage-reservations";
import { createPoUVerifier } from "./verifier";
import { type HumanProofRefusalReason, parseIsoDate, verifyProof } from "./verify-request";

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
  /** The proof's nonce was already used. */
  | "unknown_or_expired_nonce"
  /** The attestations API, the nullifier API or the storage failed: not verified, retry later. */
  | "verification_unavailable";

export type CreateVerifyHumanProofHookOptions = {
  verifier?: PoUVerifier;
  verifierOptions?: PoUVerifierOptions;
  onEvent?: OnHumanProofEvent;
  /** Required when any `accepts` entry sets `extra.maxUse`. */
  storage?: HumanUsageStorage;
  /** Where used nonces are remembered; default an in-memory store (one process only, development). */
  nonceStore?: NonceStore;
  /** Oldest `issuedAt` accepted, whatever `expirationTime` the agent sent. Default 900 (15 minutes). */
  maxProofAgeSeconds?: number;
};

export const DEFAULT_MAX_PROOF_AGE_SECONDS = 900;
// Tolerated client clock lead for `issuedAt`.
const CLOCK_SKEW_MS = 60_000;

type HookResult = { abort: true; reason: HumanProofHookReason; message?: string } | undefined;

function requiredAttestationsOf(extra: unknown): string[] {
  const value = (extra as { requiredAttestations?: unknown } | undefined)?.requiredAttestations;
  if (typeof value === "string") return value ? [value] : [];
  return Array.isArray(value) ? value.filter((s): s is string => typeof s === "string" && s !== "") : [];
}

/** The proof as JSON text: Billions' client sends the text itself, an x402 echo carries it as `info`. */
function proofText(extension: unknown): string | null {
  if (extension === undefined || extension === null || extension === "") return null;
  if (typeof extension === "string") return extension;
  const info = (extension as { info?: unknown }).info;
  return JSON.stringify(typeof info === "object" && info !== null ? info : extension);
}

function abort(reason: HumanProofHookReason, message?: string): HookResult {
  return message ? { abort: true, reason, message } : { abort: true, reason };
}

/**
 * The x402 before-verify hook. Skips tiers without `extra.requiredAttestations`; otherwise checks everything
 * `verifyHumanProofRequest` checks, plus the signed `domain`, the proof's age and single use of its nonce,
 * extra schemas, and the per-human `maxUse` quota (taken last, given back by the rollback hooks).
 */
export function createVerifyHumanProofHook(
  options: CreateVerifyHumanProofHookOptions = {},
): BeforeVerifyHook {
  const { onEvent, storage } = options;
  const verifier = options.verifier ?? createPoUVerifier(options.verifierOptions ?? {});
  const nonceStore = options.nonceStore ?? new InMemoryNonceStore();
  const maxAgeMs = (options.maxProofAgeSeconds ?? DEFAULT_MAX_PROOF_AGE_SECONDS) * 1000;

  async function check(context: VerifyContext, required: string[]): Promise<HookResult> {
    const { paymentPayload, requirements } = context;
    const declared = context.declaredExtensions?.[HUMAN_PROOF];
    const expected = expectedSigningTerms(declared, paymentPayload.resource?.url ?? "");

    const result = await verifyProof<HumanProofHookReason>(
      verifier,
      {
        resource: expected.uri,
        humanProofHeader: proofText(paymentPayload.extensions?.[HUMAN_PROOF]),
        onEvent,
      },
      async (proof) => {
        if (proof.domain !== expected.domain) return "wrong_domain_or_resource";
        const issuedAt = parseIsoDate(proof.issuedAt) as number;
        const now = Date.now();
        if (issuedAt > now + CLOCK_SKEW_MS) return "invalid_issued_at";
        if (now - issuedAt > maxAgeMs) return "message_expired";
        const fresh = await nonceStore.consume(proof.nonce, new Date(issuedAt + maxAgeMs));
        return fresh ? undefined : "unknown_or_expired_nonce";
      },
    );
    if (!result.allowed) return abort(result.reason);
    const { did, chainId, resolution } = result;

    const extraSchemas = required.filter((schema) => schema !== verifier.ownershipSchema);
    if (extraSchemas.length) {
      if (!verifier.hasAttestation) return abort("verifier_cannot_check_attestations");
      for (const schema of extraSchemas) {
        if (!(await verifier.hasAttestation(did, chainId, schema)))
          return abort("missing_required_attestation");
      }
    }

    const extra = requirements.extra as Record<string, unknown> | undefined;
    const maxUse = extra?.maxUse;
    if (maxUse === undefined) return undefined;
    if (typeof maxUse !== "number" || !Number.isSafeInteger(maxUse) || maxUse < 1)
      return abort("invalid_max_use_value");
    if (!storage) return abort("misconfigured_max_use_storage");
    const scope = typeof extra?.scope === "string" && extra.scope ? extra.scope : expected.uri;
    const count = await storage.incrementIfBelow(resolution.humanId, maxUse, scope);
    if (count === null) {
      await onEvent?.({
        type: "max_use_exceeded",
        resource: expected.uri,
        humanId: resolution.humanId,
        maxUse,
        scope,
      });
      return abort("max_use_exceeded");
    }
    recordReservation(storage, paymentPayload, { humanId: resolution.humanId, scope });
    return undefined;
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

/** Rollback hooks need only the storage; `verifier` is accepted for call compatibility with Billions' package. */
export type RollbackHookOptions = { storage: HumanUsageStorage; verifier?: PoUVerifier };
export type CreateAfterVerifyFailureRollbackHookOptions = RollbackHookOptions;
export type CreateVerifyFailureRollbackHookOptions = RollbackHookOptions;
export type CreateSettleFailureRollbackHookOptions = RollbackHookOptions;
export type CreateVerifiedPaymentCanceledRollbackHookOptions = RollbackHookOptions;

/** `onAfterVerify`: the facilitator found the payment invalid; give the quota back. */
export function createAfterVerifyFailureRollbackHook({ storage }: RollbackHookOptions): AfterVerifyHook {
  return async (context) => {
    if (context.result.isValid === false) await releaseReservation(storage, context.paymentPayload);
  };
}

/** `onVerifyFailure`: verification threw; give the quota back. */
export function createVerifyFailureRollbackHook({ storage }: RollbackHookOptions): OnVerifyFailureHook {
  return async (context) => {
    await releaseReservation(storage, context.paymentPayload);
  };
}

/** `onSettleFailure`: settlement failed after verification passed; give the quota back. */
export function createSettleFailureRollbackHook({ storage }: RollbackHookOptions): OnSettleFailureHook {
  return async (context) => {
    await releaseReservation(storage, context.paymentPayload);
  };
}

/** `onVerifiedPaymentCanceled`: the handler failed (or an after-verify hook aborted) after verification; give the quota back. */
export function createVerifiedPaymentCanceledRollbackHook({
  storage,
}: RollbackHookOptions): OnVerifiedPaymentCanceledHook {
  return async (context) => {
    await releaseReservation(storage, context.paymentPayload);
  };
}
