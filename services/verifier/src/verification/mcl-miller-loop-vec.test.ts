import * as mcl from "mcl-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { initGroth16 } from "./groth16-mcl.ts";
import { millerLoopVec } from "./mcl-miller-loop-vec.ts";

describe("mcl multi-Miller loop", () => {
  beforeAll(() => initGroth16());

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
