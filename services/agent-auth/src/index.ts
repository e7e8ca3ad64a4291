export { type AppDeps, buildApp } from "./app";
export { createRegistry, type RegistryOptions } from "./attestations";
export { type Clock, systemClock } from "./clock";
export { AgentAuthEnv, type PublicTerms, publicTerms } from "./config";
export { migrations } from "./db/migrations";
export { type AgentAuthDb, SCHEMA } from "./db/schema";
export { directChallengeMessage, helperChallenge } from "./nonces/challenges";
export { createNonceStore, NONCE_LIFETIME_MS, type NonceStore } from "./nonces/nonce-store";
export { startNoncePurge } from "./nonces/purge";
