import { createRequire } from "node:module";
import * as mcl from "mcl-wasm";
import type * as MclHeap from "mcl-wasm/dist/mcl.js";

/**
 * The only module that touches mcl-wasm internals: its compiled module's `_mclBn_millerLoopVec`, which
 * mcl-wasm's JavaScript API does not wrap, reached through the heap helpers of `mcl-wasm/dist/mcl.js` and each
 * value's limbs. They were read in this version; any other falls back to the public API.
 */
export const MULTI_MILLER_LOOP_MCL_VERSION = "2.4.1";

type Limbs = { a_: Uint32Array };
type MclModule = { _mclBn_millerLoopVec?: (out: number, g1: number, g2: number, n: number) => void };
type Heap = typeof MclHeap & { mod?: MclModule };

const requireHere = createRequire(import.meta.url);

function loadHeap(): Heap | undefined {
  try {
    // The live CommonJS exports, the instance mcl-wasm itself uses: its heap helpers are assigned by init().
    return requireHere("mcl-wasm/dist/mcl.js") as Heap;
  } catch {
    return undefined;
  }
}

const heap = loadHeap();

/** `multi`: one call of mcl's multi-Miller loop; `per-pair`: mcl-wasm's public `millerLoop` per pair, multiplied. */
export type MillerLoopPath = "multi" | "per-pair";

export interface MclWasmInspection {
  version: string;
  /** Whether the compiled module exports `_mclBn_millerLoopVec`. */
  exported: boolean;
}

/** What the installed mcl-wasm offers; meaningful once mcl.init() has resolved (it fills the module's exports). */
export function inspectMclWasm(): MclWasmInspection {
  const { version } = requireHere("mcl-wasm/package.json") as { version: string };
  return { version, exported: typeof heap?.mod?._mclBn_millerLoopVec === "function" };
}

let path: MillerLoopPath = "per-pair";

/** Chooses the path once mcl is initialised: the multi-Miller loop only on the version its internals were read in. */
export function chooseMillerLoopPath(inspection: MclWasmInspection = inspectMclWasm()): MillerLoopPath {
  path = inspection.version === MULTI_MILLER_LOOP_MCL_VERSION && inspection.exported ? "multi" : "per-pair";
  return path;
}

/** The path this thread's `millerLoopVec` takes. */
export function millerLoopPath(): MillerLoopPath {
  return path;
}

/**
 * Π ML(P_i, Q_i), equal to the product of the single loops after the final exponentiation. mcl's multi-Miller
 * loop shares the Fp12 squarings of all pairs (about 30 % less than one Miller loop per pair).
 */
export function millerLoopVec(g1: readonly mcl.G1[], g2: readonly mcl.G2[]): mcl.GT {
  if (g1.length === 0 || g1.length !== g2.length)
    throw new Error("millerLoopVec: mismatched or empty vectors");
  if (path === "per-pair" || !heap?.mod?._mclBn_millerLoopVec)
    return g1.map((p, i) => mcl.millerLoop(p, g2[i])).reduce((product, f) => mcl.mul(product, f));
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
