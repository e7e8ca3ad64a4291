import type { Logger } from "@humanpass/telemetry";
import type { Clock } from "../clock";
import { createAttestationsApiClient } from "./api-client";
import { createHumanResolver, type HumanResolver } from "./human-resolver";
import { cachedResolver, ResolutionCache } from "./resolution-cache";

export interface RegistryOptions {
  attestationsApiUrl: string;
  timeoutMs: number;
  retries: number;
  ownershipSchema: string;
  cacheTtlMs: number;
  cacheMaxEntries: number;
  clock: Clock;
  logger: Logger;
}

/** The resolver the service runs with: the attestations API client behind the positive-lookup cache. */
export function createRegistry(options: RegistryOptions): {
  resolver: HumanResolver;
  cache: ResolutionCache;
} {
  const api = createAttestationsApiClient({
    baseUrl: options.attestationsApiUrl,
    timeoutMs: options.timeoutMs,
    retries: options.retries,
    logger: options.logger,
  });
  const cache = new ResolutionCache({
    ttlMs: options.cacheTtlMs,
    maxEntries: options.cacheMaxEntries,
    clock: options.clock,
  });
  return { resolver: cachedResolver(createHumanResolver(api, options.ownershipSchema), cache), cache };
}
