import type { HumanResolution, PoUVerifier } from "@humanpass/human-proof";

export interface CachedVerifierOptions {
  /** How long a found human is reused; 0 turns caching off. */
  ttlMs: number;
  /**
   * How long "not paired" is reused (default 0, never): brief, so a new pairing is seen soon, yet long enough
   * that proofs signed by fresh keys do not each cost a registry lookup.
   */
  negativeTtlMs?: number;
  maxEntries?: number;
  /**
   * How long a revoked attestation is kept out of the cache: the attestations API applies the revocation on its
   * own schedule, and a lookup it answered before catching up must not be cached again.
   */
  revokedMemoryMs?: number;
  now?: () => number;
}

type Entry = { resolution: HumanResolution; expiresAt: number };

/**
 * Reuses `lookupHuman` answers for a while, so a paying agent is not looked up twice over HTTP per request.
 * Found humans are cached for `ttlMs`, "not paired" only for the brief `negativeTtlMs`; entries go when their attestation is revoked
 * (`chain.attestation_revoked`) and all at once on a reorg. Concurrent lookups of one DID share one request.
 */
export class CachedPoUVerifier implements PoUVerifier {
  readonly ownershipSchema: string;
  readonly hasAttestation?: PoUVerifier["hasAttestation"];
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<HumanResolution | null>>();
  private readonly revoked = new Map<string, number>();
  private readonly unpaired = new Map<string, number>();
  private readonly now: () => number;
  private readonly maxEntries: number;
  private readonly revokedMemoryMs: number;

  constructor(
    private readonly inner: PoUVerifier,
    private readonly options: CachedVerifierOptions,
  ) {
    this.ownershipSchema = inner.ownershipSchema;
    if (inner.hasAttestation)
      this.hasAttestation = (did, chainId, schema) => inner.hasAttestation!(did, chainId, schema);
    this.now = options.now ?? Date.now;
    this.maxEntries = options.maxEntries ?? 100_000;
    this.revokedMemoryMs = options.revokedMemoryMs ?? 600_000;
  }

  async lookupHuman(did: string, chainId: string): Promise<HumanResolution | null> {
    if (this.options.ttlMs === 0) return this.inner.lookupHuman(did, chainId);
    const entry = this.entries.get(did);
    if (entry && entry.expiresAt > this.now()) return entry.resolution;
    if (entry) this.entries.delete(did);
    const unpairedUntil = this.unpaired.get(did);
    if (unpairedUntil !== undefined) {
      if (unpairedUntil > this.now()) return null;
      this.unpaired.delete(did);
    }
    const pending = this.inFlight.get(did);
    if (pending) return pending;
    const lookup = this.inner
      .lookupHuman(did, chainId)
      .then((resolution) => {
        if (resolution) this.remember(did, resolution);
        else this.rememberUnpaired(did);
        return resolution;
      })
      .finally(() => this.inFlight.delete(did));
    this.inFlight.set(did, lookup);
    return lookup;
  }

  /** The attestation no longer pairs its agent with a human. */
  revoke(attestationId: string, recipientDid: string): void {
    const id = attestationId.toLowerCase();
    this.revoked.set(id, this.now());
    this.entries.delete(recipientDid);
    for (const [did, entry] of this.entries) {
      if (entry.resolution.attestationId.toLowerCase() === id) this.entries.delete(did);
    }
  }

  clear(): void {
    this.entries.clear();
    this.unpaired.clear();
  }

  private rememberUnpaired(did: string): void {
    const ttl = this.options.negativeTtlMs ?? 0;
    if (ttl <= 0) return;
    if (this.unpaired.size >= this.maxEntries) {
      const oldest = this.unpaired.keys().next().value;
      if (oldest !== undefined) this.unpaired.delete(oldest);
    }
    this.unpaired.set(did, this.now() + ttl);
  }

  private remember(did: string, resolution: HumanResolution): void {
    const now = this.now();
    const revokedAt = this.revoked.get(resolution.attestationId.toLowerCase());
    if (revokedAt !== undefined && now - revokedAt < this.revokedMemoryMs) return;
    if (this.entries.size >= this.maxEntries) {
      // Maps iterate in insertion order: the first key is the oldest entry.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(did, { resolution, expiresAt: now + this.options.ttlMs });
  }
}
