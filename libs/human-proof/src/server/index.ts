export { AttestationsApiError, type Revocation } from "@humanpass/attestations-client";
export {
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  DEFAULT_ATTESTATIONS_API_BASE_URL,
  DEFAULT_NULLIFIER_API_BASE_URL,
  HUMAN_PROOF,
  HUMAN_PROOF_HEADER,
} from "../common/constants.ts";
export { formatSIWEMessage, type SignedMessageFields } from "../common/message.ts";
export { recoverHashSigner, recoverMessageSigner } from "../common/recover-signer.ts";
export type {
  HumanProofChallenge,
  HumanProofExtensionInfo,
  HumanProofPayload,
  SignatureType,
  SupportedChain,
} from "../common/types.ts";
export {
  maxUseExceededEvent,
  REFUND_GRACE_MS,
  type SequentialAdmissionsOptions,
  sequentialAdmissions,
} from "./admissions.ts";
export {
  CHALLENGE_NONCE_PATTERN,
  type ChallengeNonceOptions,
  type ChallengeNonces,
  createChallengeNonces,
  MIN_NONCE_KEY_LENGTH,
  type NonceTerms,
} from "./challenge-nonces.ts";
export { buildHumanProofSchema } from "./challenge-schema.ts";
export { type ConfigureHumanProofServerOptions, configureHumanProofServer } from "./configure.ts";
export {
  type DeclareHumanProofOptions,
  declareHumanProofExtension,
  type HumanProofDeclaration,
} from "./declare.ts";
export {
  type CreateHumanProofExtensionOptions,
  createHumanProofExtension,
  HUMAN_PROOF_DYNAMIC_INFO_FIELDS,
} from "./extension.ts";
export {
  type CreateAfterVerifyFailureRollbackHookOptions,
  type CreateSettleFailureRollbackHookOptions,
  type CreateVerifiedPaymentCanceledRollbackHookOptions,
  type CreateVerifyFailureRollbackHookOptions,
  type CreateVerifyHumanProofHookOptions,
  createAfterVerifyFailureRollbackHook,
  createSettleFailureRollbackHook,
  createVerifiedPaymentCanceledRollbackHook,
  createVerifyFailureRollbackHook,
  createVerifyHumanProofHook,
  DEFAULT_MAX_PROOF_AGE_SECONDS,
  type HumanProofHookReason,
  type RollbackHookOptions,
} from "./hooks.ts";
export { type CachingPoUVerifier, cachePositiveLookups, type LookupCacheOptions } from "./lookup-cache.ts";
export { InMemoryHumanUsageStorage, InMemoryUsedNonceStore } from "./memory-stores.ts";
export {
  type Authorization,
  DUPLICATE_PAYMENT,
  guardPayments,
  MALFORMED_PAYMENT,
  type PaymentGuardOptions,
  type PaymentReservationHooks,
  paymentReservationHooks,
  RESERVATION_UNAVAILABLE,
  refuseMalformedPayment,
  UNOFFERED_PAYMENT,
} from "./payment-guards.ts";
export { admittedProofNonceOf } from "./payment-proof.ts";
export {
  authorizationOf,
  InMemoryPaymentReservations,
  type PaymentAuthorization,
  type PaymentReservations,
} from "./payment-reservations.ts";
export { DEFAULT_PAYWALL_HTML, paywallInstructions } from "./paywall.ts";
export { PublicHTTPResourceServer, type PublicHTTPResourceServerOptions } from "./public-http-server.ts";
export { HumanProofResourceServer } from "./resource-server.ts";
export { settleBeforeHandlerUnlessGet } from "./settle-before-handler.ts";
export { type Stablecoin, stablecoinMoneyParser } from "./stablecoin.ts";
export type {
  AdmissionOutcome,
  HumanNotRegisteredEvent,
  HumanProofEvent,
  HumanResolution,
  HumanUsageStorage,
  HumanVerifiedEvent,
  MaxUseExceededEvent,
  OnHumanProofEvent,
  PoUVerifier,
  PoUVerifierOptions,
  ProofAdmission,
  ProofAdmissions,
  UsedNonceStore,
} from "./types.ts";
export { createPoUVerifier } from "./verifier.ts";
export {
  agentDidFromAddress,
  type HumanProofAllowed,
  type HumanProofRefusalReason,
  type HumanProofRequestContext,
  type HumanProofRequestResult,
  parseHumanProofHeader,
  verifyHumanProofRequest,
} from "./verify-request.ts";
