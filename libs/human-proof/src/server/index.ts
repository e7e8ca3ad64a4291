export { AttestationsApiError, type Revocation } from "@humanpass/attestations-client";
export {
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  DEFAULT_ATTESTATIONS_API_BASE_URL,
  DEFAULT_NULLIFIER_API_BASE_URL,
  HUMAN_PROOF,
  HUMAN_PROOF_HEADER,
} from "../common/constants";
export { formatSIWEMessage, type SignedMessageFields } from "../common/message";
export { recoverMessageSigner } from "../common/recover-signer";
export type {
  HumanProofChallenge,
  HumanProofExtensionInfo,
  HumanProofPayload,
  SignatureType,
  SupportedChain,
} from "../common/types";
export { maxUseExceededEvent, type SequentialAdmissionsOptions, sequentialAdmissions } from "./admissions";
export {
  CHALLENGE_NONCE_PATTERN,
  type ChallengeNonceOptions,
  type ChallengeNonces,
  createChallengeNonces,
  MIN_NONCE_KEY_LENGTH,
  type NonceTerms,
} from "./challenge-nonces";
export { buildHumanProofSchema } from "./challenge-schema";
export { type ConfigureHumanProofServerOptions, configureHumanProofServer } from "./configure";
export {
  type DeclareHumanProofOptions,
  declareHumanProofExtension,
  type HumanProofDeclaration,
} from "./declare";
export {
  type CreateHumanProofExtensionOptions,
  createHumanProofExtension,
  HUMAN_PROOF_DYNAMIC_INFO_FIELDS,
} from "./extension";
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
} from "./hooks";
export { type CachingPoUVerifier, cachePositiveLookups, type LookupCacheOptions } from "./lookup-cache";
export { InMemoryHumanUsageStorage, InMemoryNonceStore } from "./memory-stores";
export { DEFAULT_PAYWALL_HTML, paywallInstructions } from "./paywall";
export { PublicHTTPResourceServer, type PublicHTTPResourceServerOptions } from "./public-http-server";
export { type Stablecoin, stablecoinMoneyParser } from "./stablecoin";
export type {
  AdmissionOutcome,
  HumanNotRegisteredEvent,
  HumanProofEvent,
  HumanResolution,
  HumanUsageStorage,
  HumanVerifiedEvent,
  MaxUseExceededEvent,
  NonceStore,
  OnHumanProofEvent,
  PoUVerifier,
  PoUVerifierOptions,
  ProofAdmission,
  ProofAdmissions,
} from "./types";
export { createPoUVerifier } from "./verifier";
export {
  agentDidFromAddress,
  type HumanProofAllowed,
  type HumanProofRefusalReason,
  type HumanProofRequestContext,
  type HumanProofRequestResult,
  parseHumanProofHeader,
  verifyHumanProofRequest,
} from "./verify-request";
