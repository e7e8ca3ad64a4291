import type { HumanResolution, PoUVerifier } from "./types";

export type LookupCacheOptions = {
  /** How long a positive lookup is reused. */
  ttlMs: number;
  /** Oldest entries are dropped beyond this many DIDs. Default 10000. */
  maxEntries?: number;
  now?: () => number;
};

export type CachingPoUVerifier = PoUVerifier & {
  /** Forgets the DID at once, e.g. when its ownership attestation is revoked. */
  invalidate(agentDid: string): void;
};

/**
 * Reuses positive `lookupHuman` answers for `ttlMs`. Negative answers and errors are never cached, so a new
 * pairing is seen at once; call `invalidate` when a revocation event for the agent arrives.
 */
export function cachePositiveLookups(verifier: PoUVerifier, options: LookupCacheOptions): CachingPoUVerifier {
  const { ttlMs, maxEntries = 10_000, now = Date.now } = options;
  const entries = new Map<string, { resolution: HumanResolution; until: number }>();

  const cached: CachingPoUVerifier = {
    ownershipSchema: verifier.ownershipSchema,
    async lookupHuman(did, chainId) {
      const entry = entries.get(did);
      if (entry && entry.until > now()) return entry.resolution;
      entries.delete(did);
      const resolution = await verifier.lookupHuman(did, chainId);
      if (resolution) {
        entries.set(did, { resolution, until: now() + ttlMs });
        if (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
      }
      return resolution;
    },
    invalidate(agentDid) {
      entries.delete(agentDid);
    },
  };
  if (verifier.hasAttestation) cached.hasAttestation = verifier.hasAttestation.bind(verifier);
  return cached;
}
