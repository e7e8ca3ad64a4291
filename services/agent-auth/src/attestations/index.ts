import {
  createAttestationsClient,
  createHumanLookup,
  HumanCache,
  type HumanLookup,
} from "@humanpass/attestations-client";
import type { Clock } from "@humanpass/service";
import type { Logger } from "@humanpass/telemetry";

export interface RegistryOptions {
  /** The attestations API's origin (`ATTESTATIONS_API_URL`, no `/api/v1`). */
  attestationsApiUrl: string;
  timeoutMs: number;
  retries: number;
  ownershipSchema: string;
  cacheTtlMs: number;
  cacheMaxEntries: number;
  clock: Clock;
  logger: Logger;
}

/**
 * The lookup the service runs with: the attestations API behind this replica's cache of found humans, keyed by
 * address (direct path) and by DID (helper path). `cache` is what chain invalidations clear.
 */
export function createRegistry(options: RegistryOptions): { resolver: HumanLookup; cache: HumanCache } {
  const client = createAttestationsClient({
    url: options.attestationsApiUrl,
    timeoutMs: options.timeoutMs,
    retries: options.retries,
    logger: options.logger,
  });
  const lookup = createHumanLookup(client, options.ownershipSchema);
  const cache = new HumanCache({
    ttlMs: options.cacheTtlMs,
    maxEntries: options.cacheMaxEntries,
    now: options.clock,
  });
  return {
    resolver: {
      byAddress: (address) =>
        cache.lookup(`address:${address.toLowerCase()}`, () => lookup.byAddress(address)),
      byDid: (did) => cache.lookup(`did:${did}`, () => lookup.byDid(did)),
    },
    cache,
  };
}
