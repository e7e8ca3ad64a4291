import { chunksByKey, microBatcher } from "@humanpass/micro-batch";
import { MAX_BATCH } from "./engine.ts";
import {
  type BatchScalars,
  type Groth16Proof,
  type ParsedGroth16Proof,
  type PreparedVerificationKey,
  parseGroth16Proof,
  randomBatchScalars,
  verifyGroth16Batches,
} from "./groth16-mcl.ts";

/** Verifies one Groth16 proof; malformed input rejects, a well-formed proof that does not verify gives false. */
export type Groth16Check = (
  key: PreparedVerificationKey,
  proof: Groth16Proof,
  publicSignals: readonly string[],
) => Promise<boolean>;

export interface Groth16Batcher {
  check: Groth16Check;
  /**
   * Starts the check of a proof the library will ask for later (a token's query proofs, which it checks one after
   * the other with state look-ups in between), so that it joins the batch of the proofs asked for now; the later
   * check of the same key, proof and signals gets this result instead of a new check.
   */
  checkAhead(key: PreparedVerificationKey, proof: Groth16Proof, publicSignals: readonly string[]): void;
}

export interface Groth16BatcherOptions {
  /** Proofs of one key checked together at most (bigger groups are split). */
  maxBatch?: number;
  scalars?: BatchScalars;
  /** Told the number of proofs each flush checks together (the batch-size series). */
  onFlush?: (proofs: number) => void;
}

interface Pending {
  key: PreparedVerificationKey;
  proof: ParsedGroth16Proof;
  resolve: (valid: boolean) => void;
  reject: (error: Error) => void;
}

/** Checks ahead whose result nobody asked for (the token failed earlier) are dropped beyond this many. */
const MAX_AHEAD = 8 * MAX_BATCH;

const aheadKey = (proof: Groth16Proof, publicSignals: readonly string[]) =>
  `${JSON.stringify(proof)}|${JSON.stringify(publicSignals)}`;

/**
 * Collects the Groth16 checks that the tokens in flight in this thread ask for, and checks them in one randomized
 * batch per verification key, the batches sharing one final exponentiation. A micro-batch: once every token that can
 * reach a proof check without waiting for I/O has done so, never later, so a lone token waits for nobody.
 */
export function createGroth16Batcher(options: Groth16BatcherOptions = {}): Groth16Batcher {
  const maxBatch = Math.max(1, options.maxBatch ?? MAX_BATCH);
  const scalars = options.scalars ?? randomBatchScalars;
  // One queue per proof: tokens carrying the same proof (a wallet retrying) each get their own check.
  const ahead = new Map<PreparedVerificationKey, Map<string, Promise<boolean>[]>>();

  const pending = microBatcher<Pending>((items) => {
    const chunks = chunksByKey(items, (item) => item.key, maxBatch);
    options.onFlush?.(items.length);
    try {
      const valid = verifyGroth16Batches(
        chunks.map(({ key, items }) => ({ key, proofs: items.map((item) => item.proof) })),
        scalars,
      );
      chunks.forEach(({ items }, c) => {
        items.forEach((item, i) => {
          item.resolve(valid[c][i]);
        });
      });
    } catch (error) {
      for (const item of items) item.reject(error as Error);
    }
  });

  const enqueue: Groth16Check = (key, proof, publicSignals) =>
    new Promise<boolean>((resolve, reject) => {
      pending.add({ key, proof: parseGroth16Proof(key, proof, publicSignals), resolve, reject });
    });

  return {
    check(key, proof, publicSignals) {
      const started = ahead.get(key);
      if (started && started.size > 0) {
        const id = aheadKey(proof, publicSignals);
        const results = started.get(id);
        const result = results?.shift();
        if (result) {
          if (results?.length === 0) started.delete(id);
          return result;
        }
      }
      return enqueue(key, proof, publicSignals);
    },
    checkAhead(key, proof, publicSignals) {
      let started = ahead.get(key);
      if (!started) {
        started = new Map();
        ahead.set(key, started);
      }
      const result = enqueue(key, proof, publicSignals);
      result.catch(() => {});
      const id = aheadKey(proof, publicSignals);
      const results = started.get(id);
      if (results) results.push(result);
      else started.set(id, [result]);
      if (started.size > MAX_AHEAD) started.delete(started.keys().next().value as string);
    },
  };
}
