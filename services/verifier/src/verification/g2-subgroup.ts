import * as mcl from "mcl-wasm";

/** The BN254 seed x (the curve's parameter u): p and r are polynomials in it. */
const SEED = 4965661367192848881n;
const BASE_FIELD_ORDER = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;

interface Psi {
  /** ξ^((p-1)/3) and ξ^((p-1)/2), ξ = 9 + u: the untwist-Frobenius-twist endomorphism's coefficients. */
  x: mcl.Fp2;
  y: mcl.Fp2;
}

let psiCoefficients: Psi | undefined;

function fp2Power(base: mcl.Fp2, exponent: bigint): mcl.Fp2 {
  let result = new mcl.Fp2();
  result.setInt(1, 0);
  let square = base;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = mcl.mul(result, square);
    square = mcl.sqr(square);
  }
  return result;
}

function coefficients(): Psi {
  if (!psiCoefficients) {
    const xi = new mcl.Fp2();
    xi.setInt(9, 1);
    psiCoefficients = {
      x: fp2Power(xi, (BASE_FIELD_ORDER - 1n) / 3n),
      y: fp2Power(xi, (BASE_FIELD_ORDER - 1n) / 2n),
    };
  }
  return psiCoefficients;
}

function conjugate(a: mcl.Fp2): mcl.Fp2 {
  const c = new mcl.Fp2();
  c.set_a(a.get_a());
  c.set_b(mcl.neg(a.get_b()));
  return c;
}

/** ψ on Jacobian or projective coordinates alike: Frobenius is a field automorphism, so it commutes with Z. */
function psi(q: mcl.G2): mcl.G2 {
  const { x, y } = coefficients();
  const image = new mcl.G2();
  image.setX(mcl.mul(conjugate(q.getX()), x));
  image.setY(mcl.mul(conjugate(q.getY()), y));
  image.setZ(conjugate(q.getZ()));
  return image;
}

/**
 * [k]Q by double-and-add through the group law, so that it is [k]Q for any point of the twist: a multiplication
 * sped up by an endomorphism (GLV) is only right inside the subgroup, which is what is being tested.
 */
export function multiply(q: mcl.G2, k: bigint): mcl.G2 {
  let result = new mcl.G2();
  for (const bit of k.toString(2)) {
    result = mcl.dbl(result);
    if (bit === "1") result = mcl.add(result, q);
  }
  return result;
}

/**
 * Whether a point of the twist lies in the order-r subgroup G2, by the endomorphism test of Dai, Lin, Zhao and Zhou
 * (eprint 2022/348, applies to BN254 since x ≢ 4 mod 13 and x ≢ 92 mod 97):
 * [x+1]Q + ψ([x]Q) + ψ²([x]Q) = ψ³([2x]Q). One multiplication by the 63-bit seed instead of one by the 254-bit r.
 */
export function isInG2Subgroup(q: mcl.G2): boolean {
  const xq = multiply(q, SEED);
  const left = mcl.add(mcl.add(mcl.add(q, xq), psi(xq)), psi(psi(xq)));
  return left.isEqual(psi(psi(psi(mcl.dbl(xq)))));
}
