import type { HumanUsageStorage, UsedNonceStore } from "./types.ts";

/**
 * Development only: counters live in this process, are lost on restart and are not shared between
 * instances, so per-human caps do not hold in production. Use a persistent shared store there.
 */
export class InMemoryHumanUsageStorage implements HumanUsageStorage {
  private readonly counts = new Map<string, number>();

  private static key(humanId: string, scope: string): string {
    return JSON.stringify([humanId, scope]);
  }

  async incrementIfBelow(humanId: string, maxUse: number, scope: string): Promise<number | null> {
    const key = InMemoryHumanUsageStorage.key(humanId, scope);
    const count = this.counts.get(key) ?? 0;
    if (count >= maxUse) return null;
    this.counts.set(key, count + 1);
    return count + 1;
  }

  async decrementIfAboveZero(humanId: string, scope: string): Promise<number | null> {
    const key = InMemoryHumanUsageStorage.key(humanId, scope);
    const count = this.counts.get(key) ?? 0;
    if (count <= 0) return null;
    if (count === 1) this.counts.delete(key);
    else this.counts.set(key, count - 1);
    return count - 1;
  }
}

/** Development only: used nonces are remembered by this process alone, until their proof is too old anyway. */
export class InMemoryUsedNonceStore implements UsedNonceStore {
  private readonly used = new Map<string, number>();

  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  async consume(nonce: string, expiresAt: Date): Promise<boolean> {
    const now = this.now();
    for (const [usedNonce, until] of this.used) {
      if (until <= now) this.used.delete(usedNonce);
    }
    if (this.used.has(nonce)) return false;
    this.used.set(nonce, expiresAt.getTime());
    return true;
  }
}
