/** Extension key in x402 `extensions` and the agent-auth header name. */
export const HUMAN_PROOF = "human-proof";
export const HUMAN_PROOF_HEADER = "HUMAN-PROOF";

/** Same values as Billions' published packages, so a default set-up talks to the same registry. */
export const DEFAULT_AGENT_OWNERSHIP_SCHEMA =
  "0xca354bee6dc5eded165461d15ccb13aceb6f77ebbb1fd3fe45aca686097f2911";
export const DEFAULT_ATTESTATIONS_API_BASE_URL =
  "https://attestations-api.billions.network/api/v1/attestations";
export const DEFAULT_NULLIFIER_API_BASE_URL = "https://attestations-api.billions.network/api/v1/nullifier";

export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;
