import {
  type BatchScalars,
  type Groth16Proof,
  type ParsedGroth16Proof,
  type PreparedVerificationKey,
  parseGroth16Proof,
  randomBatchScalars,
  verifyGroth16Each,
} from "./groth16-mcl";

/** Verifies one Groth16 proof; malformed input rejects, a well-formed proof that does not verify gives false. */
export type Groth16Check = (
  key: PreparedVerificationKey,
  proof: Groth16Proof,
  publicSignals: readonly string[],
) => Promise<boolean>;

export interface Groth16BatcherOptions {
  /** Proofs of one key checked together at most (bigger groups are split). */
  maxBatch?: number;
  scalars?: BatchScalars;
}

interface Pending {
  proof: ParsedGroth16Proof;
  resolve: (valid: boolean) => void;
  reject: (error: Error) => void;
}

/** Default cap: beyond it the per-proof saving barely grows while each batch holds the thread longer. */
export const MAX_BATCH = 32;

/**
 * Collects the Groth16 checks that the tokens in flight in this thread ask for, and checks them per verification
 * key in one randomized batch. The batch is flushed by setImmediate: once every token that can reach a proof
 * check without waiting for I/O has done so, never later, so a lone token waits for nobody.
 */
export function createGroth16Batcher(options: Groth16BatcherOptions = {}): Groth16Check {
  const maxBatch = Math.max(1, options.maxBatch ?? MAX_BATCH);
  const scalars = options.scalars ?? randomBatchScalars;
  let pending = new Map<PreparedVerificationKey, Pending[]>();
  let scheduled = false;

  const flush = (): void => {
    scheduled = false;
    const groups = pending;
    pending = new Map();
    for (const [key, items] of groups) {
      for (let start = 0; start < items.length; start += maxBatch) {
        const chunk = items.slice(start, start + maxBatch);
        try {
          const valid = verifyGroth16Each(
            key,
            chunk.map((item) => item.proof),
            scalars,
          );
          chunk.forEach((item, i) => {
            item.resolve(valid[i]);
          });
        } catch (error) {
          for (const item of chunk) item.reject(error as Error);
        }
      }
    }
  };

  return (key, proof, publicSignals) =>
    new Promise<boolean>((resolve, reject) => {
      const parsed = parseGroth16Proof(key, proof, publicSignals);
      let items = pending.get(key);
      if (!items) {
        items = [];
        pending.set(key, items);
      }
      items.push({ proof: parsed, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
