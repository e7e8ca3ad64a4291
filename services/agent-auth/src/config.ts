import { ConfigError, Env, nonceKeysProblem } from "@humanpass/config";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "@humanpass/human-proof";
import { Type } from "@sinclair/typebox";

/** The service's own environment variables (the common ones come from `@humanpass/service`). */
export const AgentAuthEnv = Type.Object({
  PORT: Env.port(8082),
  PUBLIC_URL: Env.url("http://localhost:8082"),
  HUMAN_PROOF_NONCE_KEYS: Env.nonceKeys(),
  RESOURCE_URL: Type.Optional(
    Type.String({
      pattern: "^https?://",
      description: "the URL agents sign for; default <PUBLIC_URL>/api/v1/claim",
    }),
  ),
  DOMAIN: Type.Optional(
    Type.String({ minLength: 1, description: "the signed domain; default the hostname of RESOURCE_URL" }),
  ),
  CHAIN_ID: Type.Integer({ minimum: 1, default: 45056, description: "the EVM chain id offered for signing" }),
  CHALLENGE_STATEMENT: Type.String({
    default: "Sign to prove that a verified human stands behind this agent.",
    description: "text shown to the signer",
  }),
  OWNERSHIP_SCHEMA_ID: Type.String({
    pattern: "^0x[0-9a-fA-F]{64}$",
    default: DEFAULT_AGENT_OWNERSHIP_SCHEMA,
    description: "the AgentOwnership schema id, 32-byte hex with 0x prefix",
  }),
  ATTESTATIONS_API_URL: Env.url("http://127.0.0.1:8081"),
  ATTESTATIONS_API_TIMEOUT_MS: Type.Integer({
    minimum: 1,
    default: 2_000,
    description: "an integer >= 1 (ms)",
  }),
  ATTESTATIONS_API_RETRIES: Type.Integer({
    minimum: 0,
    maximum: 5,
    default: 2,
    description: "an integer 0-5",
  }),
  ATTESTATION_CACHE_TTL_MS: Type.Integer({
    minimum: 0,
    default: 30_000,
    description: "an integer >= 0 (ms); 0 turns the cache off",
  }),
  ATTESTATION_CACHE_MAX_ENTRIES: Type.Integer({
    minimum: 1,
    default: 10_000,
    description: "an integer >= 1",
  }),
  ONE_CLAIM_PER_HUMAN: Env.boolean(false),
  NONCE_PURGE_INTERVAL_MS: Type.Integer({
    minimum: 1_000,
    default: 60_000,
    description: "an integer >= 1000 (ms)",
  }),
});

/** Rules between variables that a per-variable schema cannot state. */
export function checkSettings(config: { NODE_ENV?: string; HUMAN_PROOF_NONCE_KEYS?: string }): void {
  const problem = nonceKeysProblem(config);
  if (problem) throw new ConfigError([problem]);
}

/** What the claim routes compare a proof against. */
export interface PublicTerms {
  /** The URL agents sign for (`uri`), also the `resource` of events. */
  resource: string;
  /** The signed `domain`. */
  domain: string;
  /** CAIP-2 chain offered for eip191 signing. */
  chainId: string;
  statement: string;
  ownershipSchema: string;
}

export function publicTerms(config: {
  PUBLIC_URL: string;
  RESOURCE_URL?: string;
  DOMAIN?: string;
  CHAIN_ID: number;
  CHALLENGE_STATEMENT: string;
  OWNERSHIP_SCHEMA_ID: string;
}): PublicTerms {
  const resource = config.RESOURCE_URL ?? new URL("/api/v1/claim", config.PUBLIC_URL).toString();
  return {
    resource,
    // Same default as the SDK's `declareHumanProofExtension`: the hostname of the resource URL.
    domain: config.DOMAIN ?? new URL(resource).hostname,
    chainId: `eip155:${config.CHAIN_ID}`,
    statement: config.CHALLENGE_STATEMENT,
    ownershipSchema: config.OWNERSHIP_SCHEMA_ID.toLowerCase(),
  };
}
