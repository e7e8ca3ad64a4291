export { type AppDeps, buildApp } from "./app";
export { createRegistry, type RegistryOptions } from "./attestations";
export {
  type AttestationsApiClient,
  type AttestationsApiClientOptions,
  createAttestationsApiClient,
  VerificationUnavailableError,
} from "./attestations/api-client";
export { createHumanResolver, type HumanResolver } from "./attestations/human-resolver";
export { cachedResolver, ResolutionCache, type Revocation } from "./attestations/resolution-cache";
export { type Clock, systemClock } from "./clock";
export { AgentAuthEnv, type PublicTerms, publicTerms } from "./config";
export { migrations } from "./db/migrations";
export { type AgentAuthDb, SCHEMA } from "./db/schema";
export {
  INVALIDATION_CHANNEL,
  type InvalidationListener,
  listenForInvalidations,
  startCacheInvalidation,
} from "./events/cache-invalidation";
export { directChallengeMessage, helperChallenge } from "./nonces/challenges";
export { createNonceStore, NONCE_LIFETIME_MS, type NonceStore } from "./nonces/nonce-store";
export { startNoncePurge } from "./nonces/purge";
