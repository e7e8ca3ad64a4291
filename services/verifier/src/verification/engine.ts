/**
 * How Groth16 proofs are checked. `batch`: on mcl-wasm, the proofs of one circuit that the tokens in flight in a
 * worker thread ask for checked together in one randomized check. `single`: on mcl-wasm, each proof on its own.
 * `library`: the iden3 libraries' own code paths (@noble/curves in BigInt JavaScript).
 */
export const VERIFIER_ENGINES = ["batch", "single", "library"] as const;
export type VerifierEngine = (typeof VERIFIER_ENGINES)[number];
/**
 * Default cap of a `batch` check: beyond it the per-proof saving barely grows while each batch holds the thread
 * longer. Here rather than beside the batcher, so the main thread sizes the pool without loading mcl-wasm.
 */
export const MAX_BATCH = 32;
