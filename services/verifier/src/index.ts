// What other packages may use: the app factory (tests, tools) and the verification core (batched Groth16 on
// mcl-wasm plugged into @iden3/js-iden3-auth, JSON-LD loader, worker pool).
export { buildVerifierApp, type VerifierAppOptions } from "./app.ts";
export { buildAuthorizationRequest, universalLink } from "./authorization-request.ts";
export { VerifierEnv, verificationSettings, verifierSettings } from "./config.ts";
export { migrations } from "./db/migrations/index.ts";
export { SCHEMA, type VerifierDatabase } from "./db/schema.ts";
export { createSession, insertSession } from "./db/sessions.ts";
export { recordVerification } from "./db/verifications.ts";
export {
  createDocumentLoader,
  createHttpDocumentFetcher,
  type DocumentLoader,
  type RemoteDocumentFetcher,
} from "./verification/document-loader.ts";
export { VERIFIER_ENGINES, type VerifierEngine } from "./verification/engine.ts";
export { createGroth16Batcher, type Groth16Check } from "./verification/groth16-batcher.ts";
export {
  MclGroth16Prover,
  MemoizedCircuitStorage,
  singleGroth16Check,
  useLibraryForJwzAuth,
  useMclForJwzAuth,
} from "./verification/groth16-iden3.ts";
export {
  initGroth16,
  prepareVerificationKey,
  verifyGroth16,
  verifyGroth16Batch,
  verifyGroth16Each,
} from "./verification/groth16-mcl.ts";
export { memoizePoseidon } from "./verification/poseidon-memo.ts";
export {
  ACCEPTED_STATE_TRANSITION_DELAY_MS,
  ATOMIC_QUERY_V3_CIRCUIT_IDS,
  type AuthorizationRequest,
  type AuthorizationResponse,
  createTokenVerifier,
  type ResolvedState,
  type StateResolver,
  type StateResolvers,
  selectNullifierProof,
  type TokenVerifier,
  type TokenVerifierOptions,
  type VerificationOutcome,
  type VerifiedNullifier,
} from "./verification/token-verifier.ts";
export {
  createVerificationPool,
  type VerificationPool,
  type VerificationPoolOptions,
} from "./verification/verification-pool.ts";
