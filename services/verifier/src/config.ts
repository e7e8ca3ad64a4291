import { Env, splitList } from "@humanpass/config";
import { type Static, Type } from "@sinclair/typebox";
import { VERIFIER_ENGINES, type VerifierEngine } from "./verification/engine.ts";

const PositiveDecimal = (description: string) => Type.String({ pattern: "^[1-9][0-9]{0,76}$", description });
const Address = Type.String({
  pattern: "^0x[0-9a-fA-F]{40}$",
  description: "a 0x-prefixed 20-byte contract address",
});

/** The verifier's own variables (the common ones, DATABASE_URL and friends, come from @humanpass/service). */
export const VerifierEnv = Type.Object({
  PORT: Env.port(8080),
  HOST_URL: Env.url(),
  AUDIENCE_DID: Type.String({ pattern: "^did:", description: "the verifier's DID (did:iden3:…)" }),
  ALLOWED_ISSUER: Type.String({ pattern: "^\\s*did:", description: "a comma-separated list of issuer DIDs" }),
  POU_SCHEMA_CONTEXT: Type.String({
    minLength: 1,
    description: "the JSON-LD context URL of UniquenessCredential",
  }),
  NULLIFIER_SESSION_ID: PositiveDecimal("a positive integer, fixed for one campaign"),
  VERIFICATION_REASON: Type.String({ default: "Proof of Uniqueness", description: "text the wallet shows" }),
  BILLIONS_MAIN_RPC_URL: Type.Optional(Env.url()),
  BILLIONS_MAIN_STATE_CONTRACT: Type.Optional(Address),
  BILLIONS_TEST_RPC_URL: Type.Optional(Env.url()),
  BILLIONS_TEST_STATE_CONTRACT: Type.Optional(Address),
  IPFS_GATEWAY: Env.url("https://ipfs.io"),
  CONTEXTS_DIRS: Env.list(""),
  SESSION_TTL_SECONDS: Type.Integer({ minimum: 1, default: 900, description: "an integer >= 1 (seconds)" }),
  SESSION_RETENTION_SECONDS: Type.Integer({
    minimum: 0,
    default: 86_400,
    description: "an integer >= 0: how long an expired session still answers `expired` before it is purged",
  }),
  PROOF_MAX_AGE_SECONDS: Type.Integer({
    minimum: 1,
    default: 86_400,
    description: "an integer >= 1 (seconds)",
  }),
  VERIFIER_WORKERS: Type.Integer({
    minimum: 0,
    default: 0,
    description: "an integer >= 0; 0 = one per core",
  }),
  VERIFIER_WORKER_NICENESS: Type.Integer({
    minimum: 0,
    maximum: 19,
    default: 10,
    description: "0-19: nice value of the verification threads, so the event loop stays ahead of them",
  }),
  VERIFIER_ENGINE: Type.Union(
    VERIFIER_ENGINES.map((engine) => Type.Literal(engine)),
    {
      default: "batch",
      description:
        "batch, single or library: how proofs are checked (batch: the proofs of one circuit from the callbacks in flight in one randomized check; single: one by one; library: the iden3 libraries' own, ~25x slower)",
    },
  ),
  WALLET_URL: Env.url("https://wallet.billions.network"),
});

export type VerifierEnvValues = Static<typeof VerifierEnv>;

export interface NetworkSettings {
  rpcUrl: string;
  stateContract: string;
}

/** What the app needs, derived once from the environment. */
export interface VerifierSettings {
  hostUrl: string;
  audienceDid: string;
  allowedIssuers: string[];
  schemaContext: string;
  nullifierSessionId: string;
  reason: string;
  sessionTtlMs: number;
  sessionRetentionMs: number;
  walletUrl: string;
}

export interface VerificationSettings {
  networks: Partial<Record<"billions:main" | "billions:test", NetworkSettings>>;
  ipfsGateway: string;
  contextsDirs: string[];
  proofMaxAgeMs: number;
  workers?: number;
  workerNiceness: number;
  engine: VerifierEngine;
}

export class VerifierConfigError extends Error {}

function network(
  rpcUrl: string | undefined,
  contract: string | undefined,
  name: string,
): NetworkSettings | undefined {
  if (!rpcUrl && !contract) return undefined;
  if (!rpcUrl || !contract) {
    throw new VerifierConfigError(`${name}: set both the RPC URL and the state contract, or neither`);
  }
  return { rpcUrl, stateContract: contract };
}

export function verifierSettings(env: VerifierEnvValues): VerifierSettings {
  const allowedIssuers = splitList(env.ALLOWED_ISSUER);
  if (allowedIssuers.length === 0)
    throw new VerifierConfigError("ALLOWED_ISSUER: at least one issuer DID is required");
  return {
    hostUrl: env.HOST_URL.replace(/\/+$/, ""),
    audienceDid: env.AUDIENCE_DID,
    allowedIssuers,
    schemaContext: env.POU_SCHEMA_CONTEXT,
    nullifierSessionId: env.NULLIFIER_SESSION_ID,
    reason: env.VERIFICATION_REASON,
    sessionTtlMs: env.SESSION_TTL_SECONDS * 1000,
    sessionRetentionMs: env.SESSION_RETENTION_SECONDS * 1000,
    walletUrl: env.WALLET_URL,
  };
}

export function verificationSettings(
  env: VerifierEnvValues,
  bundledContextsDir: string,
): VerificationSettings {
  const main = network(env.BILLIONS_MAIN_RPC_URL, env.BILLIONS_MAIN_STATE_CONTRACT, "BILLIONS_MAIN_*");
  const test = network(env.BILLIONS_TEST_RPC_URL, env.BILLIONS_TEST_STATE_CONTRACT, "BILLIONS_TEST_*");
  return {
    networks: { ...(main ? { "billions:main": main } : {}), ...(test ? { "billions:test": test } : {}) },
    ipfsGateway: env.IPFS_GATEWAY,
    contextsDirs: [...splitList(env.CONTEXTS_DIRS), bundledContextsDir],
    proofMaxAgeMs: env.PROOF_MAX_AGE_SECONDS * 1000,
    workers: env.VERIFIER_WORKERS === 0 ? undefined : env.VERIFIER_WORKERS,
    workerNiceness: env.VERIFIER_WORKER_NICENESS,
    engine: env.VERIFIER_ENGINE,
  };
}

/** Wallets call the callback from the user's phone: a loopback host works only for local development. */
export function isLoopbackHost(hostUrl: string): boolean {
  const host = new URL(hostUrl).hostname;
  return (
    host === "localhost" ||
    host === "::1" ||
    host === "[::1]" ||
    host.startsWith("127.") ||
    host === "0.0.0.0"
  );
}
