import { createRequire } from "node:module";
import * as mcl from "mcl-wasm";
import type * as MclHeap from "mcl-wasm/dist/mcl.js";

/** mcl-wasm 2.4.1 internals (the version is pinned): each value's limbs, and the compiled module's exports. */
type Limbs = { a_: Uint32Array };
type MclModule = { _mclBn_millerLoopVec(out: number, g1: number, g2: number, n: number): void };
// The live CommonJS exports, the instance mcl-wasm itself uses: its heap helpers are assigned by init().
const heap = createRequire(import.meta.url)("mcl-wasm/dist/mcl.js") as typeof MclHeap & { mod: MclModule };

/**
 * Π ML(P_i, Q_i) in one call of mcl's multi-Miller loop, which shares the Fp12 squarings of all pairs (about 30 %
 * less than one Miller loop per pair); mcl-wasm's JavaScript API does not wrap it. Equal to the product of the
 * single loops after the final exponentiation.
 */
export function millerLoopVec(g1: readonly mcl.G1[], g2: readonly mcl.G2[]): mcl.GT {
  if (g1.length === 0 || g1.length !== g2.length)
    throw new Error("millerLoopVec: mismatched or empty vectors");
  const out = new mcl.GT();
  const stack = heap.stackSave();
  try {
    const outPos = heap.salloc((out as unknown as Limbs).a_);
    const g1Pos = heap.sallocArray(g1.map((p) => (p as unknown as Limbs).a_));
    const g2Pos = heap.sallocArray(g2.map((q) => (q as unknown as Limbs).a_));
    heap.mod._mclBn_millerLoopVec(outPos, g1Pos, g2Pos, g1.length);
    heap.copyFromHeap32((out as unknown as Limbs).a_, outPos);
    return out;
  } finally {
    heap.stackRestore(stack);
  }
}
