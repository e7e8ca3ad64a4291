import * as mcl from "mcl-wasm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initGroth16 } from "./groth16-mcl.ts";
import {
  chooseMillerLoopPath,
  inspectMclWasm,
  type MillerLoopPath,
  MULTI_MILLER_LOOP_MCL_VERSION,
  millerLoopPath,
  millerLoopVec,
} from "./mcl-miller-loop-vec.ts";

const inspections = {
  multi: { version: MULTI_MILLER_LOOP_MCL_VERSION, exported: true },
  "per-pair": { version: MULTI_MILLER_LOOP_MCL_VERSION, exported: false },
} as const;

describe("mcl multi-Miller loop", () => {
  beforeAll(() => initGroth16());
  afterAll(() => chooseMillerLoopPath());

  it("is chosen at start-up on the installed mcl-wasm, which exports it", () => {
    expect(inspectMclWasm()).toEqual({ version: MULTI_MILLER_LOOP_MCL_VERSION, exported: true });
    expect(millerLoopPath()).toBe("multi");
  });

  it("falls back to one public Miller loop per pair on another version or without the export", () => {
    expect(chooseMillerLoopPath({ version: "2.5.0", exported: true })).toBe("per-pair");
    expect(chooseMillerLoopPath({ version: MULTI_MILLER_LOOP_MCL_VERSION, exported: false })).toBe(
      "per-pair",
    );
    expect(millerLoopPath()).toBe("per-pair");
    expect(chooseMillerLoopPath(inspections.multi)).toBe("multi");
  });

  describe.each(["multi", "per-pair"] satisfies MillerLoopPath[])("on the %s path", (path) => {
    beforeAll(() => {
      chooseMillerLoopPath(inspections[path]);
    });

    it.each([1, 2, 7])("equals the product of %i single Miller loops after the final exponentiation", (n) => {
      const g1 = Array.from({ length: n }, (_, i) => mcl.hashAndMapToG1(`p${i}`));
      const g2 = Array.from({ length: n }, (_, i) => mcl.hashAndMapToG2(`q${i}`));
      const product = g1.map((p, i) => mcl.millerLoop(p, g2[i])).reduce((acc, f) => mcl.mul(acc, f));
      expect(mcl.finalExp(millerLoopVec(g1, g2)).isEqual(mcl.finalExp(product))).toBe(true);
      const other = mcl.hashAndMapToG2("other");
      expect(mcl.finalExp(millerLoopVec(g1, [other, ...g2.slice(1)])).isEqual(mcl.finalExp(product))).toBe(
        false,
      );
    });

    it("refuses vectors of different lengths", () => {
      expect(() => millerLoopVec([mcl.hashAndMapToG1("p")], [])).toThrow(/mismatched/);
    });
  });
});
