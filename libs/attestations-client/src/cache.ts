import { addressFromDid, addressFromIden3Id } from "@humanpass/identity";
import { LRUCache } from "lru-cache";
import type { HumanResolution } from "./lookup.ts";

export interface HumanCacheOptions {
  /** How long a found human is reused; 0 turns caching off. */
  ttlMs: number;
  /**
   * How long "not paired" is reused. Default 0 (never), so a new pairing is seen at once; a brief one spares
   * proofs signed by fresh keys a registry lookup each.
   */
  negativeTtlMs?: number;
  /** The least recently used entries go beyond this many. Default 10000. */
  maxEntries?: number;
  /**
   * How long a revoked attestation is kept out of the cache. Default 10 minutes. The attestations API applies
   * the revocation on its own schedule; an answer it gave before catching up must not be cached again.
   */
  revokedMemoryMs?: number;
  /** Milliseconds on a monotonic clock, never 0 (lru-cache reads a start time of 0 as "no TTL"); for tests. */
  now?: () => number;
}

/** The fields of `chain.attestation_revoked` that name what a revocation unpairs. */
export interface Revocation {
  attestationId: string;
  recipientDid: string;
  recipientIden3Id?: string;
}

type Entry = { resolution: HumanResolution | null };

/**
 * Human lookups of this process, by a key the caller chooses (a DID, an address). Concurrent lookups of one key
 * share one request. `invalidate` drops what a revocation unpairs, `clear` everything (a reorg, or revocations
 * that may have been missed); an answer asked for before either is returned but not kept.
 */
export class HumanCache {
  private readonly entries: LRUCache<string, Entry>;
  private readonly revoked: LRUCache<string, true>;
  private readonly inFlight = new Map<string, Promise<HumanResolution | null>>();
  private readonly ttlMs: number;
  private readonly negativeTtlMs: number;
  private generation = 0;

  constructor(options: HumanCacheOptions) {
    this.ttlMs = options.ttlMs;
    this.negativeTtlMs = options.negativeTtlMs ?? 0;
    const perf = options.now ? { now: options.now } : undefined;
    const maxEntries = options.maxEntries ?? 10_000;
    // ttlResolution 0: staleness is checked against the clock on every read, not a value cached for a tick.
    this.entries = new LRUCache({ max: maxEntries, ttlResolution: 0, perf });
    this.revoked = new LRUCache({
      max: maxEntries,
      ttl: options.revokedMemoryMs ?? 600_000,
      ttlResolution: 0,
      perf,
    });
  }

  get size(): number {
    let live = 0;
    for (const _ of this.entries.keys()) live++;
    return live;
  }

  /** The cached answer for `key`, or `load`'s, kept for its time-to-live. */
  async lookup(key: string, load: () => Promise<HumanResolution | null>): Promise<HumanResolution | null> {
    const hit = this.entries.get(key);
    if (hit) return hit.resolution;
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const generation = this.generation;
    const loading = load()
      .then((resolution) => {
        if (generation === this.generation) this.keep(key, resolution);
        return resolution;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, loading);
    return loading;
  }

  /** Forgets one key, e.g. an agent DID whose pairing changed. */
  delete(key: string): void {
    this.generation++;
    this.entries.delete(key);
  }

  /** Forgets every found human that rests on the revoked attestation or is its recipient. */
  invalidate(revocation: Revocation): void {
    this.generation++;
    const id = revocation.attestationId.toLowerCase();
    this.revoked.set(id, true);
    const address = (
      addressFromDid(revocation.recipientDid) ??
      (revocation.recipientIden3Id ? addressFromIden3Id(revocation.recipientIden3Id) : null)
    )?.toLowerCase();
    const unpaired = [...this.entries.entries()].filter(
      ([, { resolution }]) =>
        resolution &&
        (resolution.attestationId.toLowerCase() === id ||
          resolution.agentDid === revocation.recipientDid ||
          resolution.agentAddress.toLowerCase() === address),
    );
    for (const [key] of unpaired) this.entries.delete(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  private keep(key: string, resolution: HumanResolution | null): void {
    const ttl = resolution ? this.ttlMs : this.negativeTtlMs;
    if (ttl <= 0) return;
    if (resolution && this.revoked.has(resolution.attestationId.toLowerCase())) return;
    this.entries.set(key, { resolution }, { ttl });
  }
}
