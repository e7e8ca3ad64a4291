// The server and the client both have a `createHumanProofExtension` (spec 3 names): the root entry exports the
// server one under that name and the client one as `createHumanProofClientExtension`. The `./server` and
// `./client` entries export each under its own name.

export {
  type AttestationAwareSelector,
  type AttestationRequirement,
  buildDIDFromAddress,
  type CheckAttestationOptions,
  CrossOriginRedirectError,
  checkAttestation,
  createAttestationAwareSelector,
  createHumanProofExtension as createHumanProofClientExtension,
  type EVMSigner,
  extractHumanProofChallenge,
  type HumanProofClientExtensionOptions,
  isMaxUseExceededError,
  MissingAttestationsError,
  type SigningExpectation,
  signHumanProofChallengeEVM,
  signHumanProofChallengeEVMUnchecked,
  withoutRedirects,
} from "./client/index.ts";
export * from "./server/index.ts";
