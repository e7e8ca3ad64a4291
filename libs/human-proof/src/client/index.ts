import { agentDidFromAddress } from "../server/verify-request.ts";

export {
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  DEFAULT_ATTESTATIONS_API_BASE_URL,
  HUMAN_PROOF,
  HUMAN_PROOF_HEADER,
} from "../common/constants.ts";
export { formatSIWEMessage } from "../common/message.ts";
export type {
  HumanProofChallenge,
  HumanProofExtensionInfo,
  HumanProofPayload,
  SignatureType,
  SupportedChain,
} from "../common/types.ts";
export { type CheckAttestationOptions, checkAttestation } from "./check-attestation.ts";
export { isMaxUseExceededError } from "./errors.ts";
export {
  type AttestationRequirement,
  CrossOriginRedirectError,
  createHumanProofExtension,
  extractHumanProofChallenge,
  type HumanProofClientExtensionOptions,
  MissingAttestationsError,
} from "./extension.ts";
export { withoutRedirects } from "./redirects.ts";
export { type AttestationAwareSelector, createAttestationAwareSelector } from "./selector.ts";
export {
  type EVMSigner,
  type SigningExpectation,
  signHumanProofChallengeEVM,
  signHumanProofChallengeEVMUnchecked,
} from "./sign.ts";

/** The agent DID derived from its EVM address (same name as Billions' client). */
export function buildDIDFromAddress(address: string): string {
  return agentDidFromAddress(address);
}
