import { jsCrypto } from "./iden3-modules.ts";

/** Least-recently-used map: a hit moves the entry to the back, inserts past capacity drop the front. */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>();

  private readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

type PoseidonClass = typeof jsCrypto.Poseidon;
let installed = false;

/**
 * Every token of a campaign answers the same query, and the libraries recompute its Poseidon hashes (query hash,
 * merklized claim paths, value hashes) on every verification in BigInt JavaScript. Poseidon is a pure function,
 * so this thread's `Poseidon.hash`, `hashBytes` and `spongeHashX` are wrapped with a bounded memo: repeated query
 * work becomes a lookup while per-token inputs only pass through the cache. Errors are never cached.
 */
export function memoizePoseidon(capacity = 8192): void {
  if (installed) return;
  installed = true;
  const poseidon: PoseidonClass = jsCrypto.Poseidon;
  const hash = poseidon.hash.bind(poseidon);
  const hashBytes = poseidon.hashBytes.bind(poseidon);
  const spongeHashX = poseidon.spongeHashX.bind(poseidon);
  const cache = new LruCache<string, bigint>(capacity);
  const memo = (key: string, compute: () => bigint): bigint => {
    const known = cache.get(key);
    if (known !== undefined) return known;
    const value = compute();
    cache.set(key, value);
    return value;
  };
  poseidon.hash = (inputs: bigint[]) => memo(`h${inputs.join(",")}`, () => hash(inputs));
  poseidon.hashBytes = (msg: Uint8Array) =>
    memo(`b${Buffer.from(msg.buffer, msg.byteOffset, msg.byteLength).toString("hex")}`, () => hashBytes(msg));
  poseidon.spongeHashX = (inputs: bigint[], frameSize: number) =>
    memo(`s${frameSize}:${inputs.join(",")}`, () => spongeHashX(inputs, frameSize));
}
