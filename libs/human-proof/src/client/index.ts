import { agentDidFromAddress } from "../server/verify-request";

export {
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  DEFAULT_ATTESTATIONS_API_BASE_URL,
  HUMAN_PROOF,
  HUMAN_PROOF_HEADER,
} from "../common/constants";
export { formatSIWEMessage } from "../common/message";
export type {
  HumanProofChallenge,
  HumanProofExtensionInfo,
  HumanProofPayload,
  SignatureType,
  SupportedChain,
} from "../common/types";
export { type CheckAttestationOptions, checkAttestation } from "./check-attestation";
export { isMaxUseExceededError } from "./errors";
export {
  type AttestationRequirement,
  createHumanProofExtension,
  extractHumanProofChallenge,
  type HumanProofClientExtensionOptions,
  MissingAttestationsError,
} from "./extension";
export { withoutRedirects } from "./redirects";
export { type AttestationAwareSelector, createAttestationAwareSelector } from "./selector";
export {
  type EVMSigner,
  type SigningExpectation,
  signHumanProofChallengeEVM,
  signHumanProofChallengeEVMUnchecked,
} from "./sign";

/** The agent DID derived from its EVM address (same name as Billions' client). */
export function buildDIDFromAddress(address: string): string {
  return agentDidFromAddress(address);
}
