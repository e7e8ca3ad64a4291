import type { HumanResolution } from "@humanpass/human-proof";
import { addressFromDid, addressFromIden3Id } from "@humanpass/identity";
import type { Clock } from "../clock";
import type { HumanResolver } from "./human-resolver";

export interface ResolutionCacheOptions {
  /** How long a positive lookup is reused; 0 turns caching off. */
  ttlMs: number;
  maxEntries: number;
  clock: Clock;
  /**
   * How long a revoked attestation is refused a place in the cache. The attestations API applies the same
   * revocation on its own schedule; a lookup answered before it caught up must not be cached again.
   */
  revokedMemoryMs?: number;
}

export interface Revocation {
  attestationId: string;
  recipientDid: string;
  recipientIden3Id: string;
}

type Entry = { resolution: HumanResolution; expiresAt: number };

/**
 * Positive lookups only (a "not paired" answer is never cached, so a new pairing works at once). Entries are
 * dropped when their attestation is revoked (`chain.attestation_revoked`) and all at once on a reorg.
 */
export class ResolutionCache {
  private readonly entries = new Map<string, Entry>();
  private readonly revoked = new Map<string, number>();
  private readonly revokedMemoryMs: number;

  constructor(private readonly options: ResolutionCacheOptions) {
    this.revokedMemoryMs = options.revokedMemoryMs ?? 600_000;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): HumanResolution | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.options.clock()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.resolution;
  }

  set(key: string, resolution: HumanResolution): void {
    if (this.options.ttlMs === 0) return;
    const now = this.options.clock();
    const revokedAt = this.revoked.get(resolution.attestationId.toLowerCase());
    if (revokedAt !== undefined && now - revokedAt < this.revokedMemoryMs) return;
    this.entries.delete(key);
    if (this.entries.size >= this.options.maxEntries) {
      // Maps iterate in insertion order: the first key is the oldest entry.
      this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(key, { resolution, expiresAt: now + this.options.ttlMs });
  }

  /** Forgets every entry that rests on the revoked attestation or names its recipient. */
  revoke(revocation: Revocation): void {
    const id = revocation.attestationId.toLowerCase();
    const now = this.options.clock();
    this.revoked.set(id, now);
    for (const [attestation, at] of this.revoked) {
      if (now - at >= this.revokedMemoryMs) this.revoked.delete(attestation);
    }
    const address =
      addressFromDid(revocation.recipientDid) ?? addressFromIden3Id(revocation.recipientIden3Id);
    const keys = new Set([didKey(revocation.recipientDid), ...(address ? [addressKey(address)] : [])]);
    for (const [key, entry] of this.entries) {
      if (keys.has(key) || entry.resolution.attestationId.toLowerCase() === id) this.entries.delete(key);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}

export function addressKey(address: string): string {
  return `address:${address.toLowerCase()}`;
}

export function didKey(did: string): string {
  return `did:${did}`;
}

/** The resolver with positive answers kept in `cache`. */
export function cachedResolver(inner: HumanResolver, cache: ResolutionCache): HumanResolver {
  async function through(key: string, lookup: () => Promise<HumanResolution | null>) {
    const hit = cache.get(key);
    if (hit) return hit;
    const resolution = await lookup();
    if (resolution) cache.set(key, resolution);
    return resolution;
  }
  return {
    byAddress: (address) => through(addressKey(address), () => inner.byAddress(address)),
    byDid: (did) => through(didKey(did), () => inner.byDid(did)),
  };
}
