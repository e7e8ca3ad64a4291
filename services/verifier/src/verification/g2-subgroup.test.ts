import * as mcl from "mcl-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { beta1, decodeToken, stable } from "../../test/support/fixtures.ts";
import { twistPoints } from "../../test/support/twist-points.ts";
import { isInG2Subgroup, multiply } from "./g2-subgroup.ts";
import { initGroth16, SCALAR_FIELD_ORDER } from "./groth16-mcl.ts";

/** The twist's cofactor and its prime factors: a point outside G2 has a component of one of these orders. */
const COFACTOR = 21888242871839275222246405745257275088844257914179612981679871602714643921549n;
const COFACTOR_PRIMES = [
  10069n,
  5864401n,
  1875725156269n,
  197620364512881247228717050342013327560683201906968909n,
];

const inSubgroupByOrder = (q: mcl.G2) => multiply(q, SCALAR_FIELD_ORDER).isZero();

describe("G2 subgroup membership by the endomorphism test", () => {
  beforeAll(() => initGroth16());

  it("multiplies through the group law as mcl does inside G2, where mcl's multiplication is right", () => {
    for (let i = 0; i < 5; i++) {
      const q = mcl.hashAndMapToG2(`scalar ${i}`);
      const k = new mcl.Fr();
      k.setByCSPRNG();
      expect(multiply(q, BigInt(k.getStr())).isEqual(mcl.mul(q, k))).toBe(true);
    }
  });

  it("accepts points of G2: hashed to G2, and the B points of the fixture proofs", () => {
    const proofB = [stable.token, beta1.token].flatMap((token) => {
      const { authProof, payload } = decodeToken(token);
      return [authProof.proof, ...payload.body.scope.map((entry: { proof: unknown }) => entry.proof)];
    });
    const points = [
      ...Array.from({ length: 20 }, (_, i) => mcl.hashAndMapToG2(`point ${i}`)),
      ...proofB.map((proof) => {
        const [x, y] = (proof as { pi_b: string[][] }).pi_b;
        const point = new mcl.G2();
        point.setStr(`1 ${x[0]} ${x[1]} ${y[0]} ${y[1]}`, 10);
        return point;
      }),
    ];
    for (const point of points) {
      expect(inSubgroupByOrder(point)).toBe(true);
      expect(isInG2Subgroup(point)).toBe(true);
    }
  });

  it("refuses points of the twist outside G2, as [r]Q != 0 does", () => {
    const points = twistPoints(40);
    for (const point of points) {
      expect(point.isValid()).toBe(true);
      expect(isInG2Subgroup(point)).toBe(inSubgroupByOrder(point));
    }
    expect(points.some(isInG2Subgroup)).toBe(false);
  });

  it.each(COFACTOR_PRIMES.map((f) => [f]))("refuses a point of G2 plus a component of order %s", (order) => {
    const [point] = twistPoints(1, Number(order % 1000n) + 3);
    const component = multiply(point, SCALAR_FIELD_ORDER * (COFACTOR / order));
    expect(component.isZero()).toBe(false);
    expect(multiply(component, order).isZero()).toBe(true);
    const mixed = mcl.add(mcl.hashAndMapToG2(`mixed ${order}`), component);
    expect(mixed.isValid()).toBe(true);
    expect(isInG2Subgroup(component)).toBe(false);
    expect(isInG2Subgroup(mixed)).toBe(false);
  });
});
