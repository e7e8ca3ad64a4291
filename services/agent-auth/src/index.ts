export { type Clock, systemClock } from "@humanpass/service";
export { type AppDeps, buildApp } from "./app.ts";
export { createRegistry, type RegistryOptions } from "./attestations/index.ts";
export { AgentAuthEnv, checkSettings, type PublicTerms, publicTerms } from "./config.ts";
export { migrations } from "./db/migrations/index.ts";
export { type AgentAuthDb, SCHEMA } from "./db/schema.ts";
export { directChallengeMessage, helperChallenge } from "./nonces/challenges.ts";
export { type ClaimNonces, createClaimNonces, NONCE_LIFETIME_MS } from "./nonces/claim-nonces.ts";
export { noncePurgeJob } from "./nonces/purge.ts";
