import { HumanCache, type HumanCacheOptions, type Revocation } from "@humanpass/attestations-client";
import type { PoUVerifier } from "./types.ts";

export type LookupCacheOptions = HumanCacheOptions;

export type CachingPoUVerifier = PoUVerifier & {
  /** Forgets the DID at once, e.g. when its ownership attestation is revoked. */
  invalidate(agentDid: string): void;
  /** Forgets every DID that rests on the attestation of a `chain.attestation_revoked` event, or is its recipient. */
  revoke(revocation: Revocation): void;
  /** Forgets everything, e.g. on `chain.blocks_reverted` or when revocations may have been missed. */
  clear(): void;
};

/**
 * Reuses `lookupHuman` answers: found humans for `ttlMs`, "not paired" only for `negativeTtlMs` (default 0, so a
 * new pairing is seen at once); errors never. Concurrent lookups of one DID share one request. Call `revoke` when a
 * revocation event for the agent arrives.
 */
export function cachePositiveLookups(verifier: PoUVerifier, options: LookupCacheOptions): CachingPoUVerifier {
  const cache = new HumanCache(options);
  const cached: CachingPoUVerifier = {
    ownershipSchema: verifier.ownershipSchema,
    lookupHuman: (did, chainId) => cache.lookup(did, () => verifier.lookupHuman(did, chainId)),
    invalidate: (agentDid) => cache.delete(agentDid),
    revoke: (revocation) => cache.invalidate(revocation),
    clear: () => cache.clear(),
  };
  if (verifier.hasAttestation) cached.hasAttestation = verifier.hasAttestation.bind(verifier);
  return cached;
}
