import { randomFillSync } from "node:crypto";
import * as mcl from "mcl-wasm";
import { isInG2Subgroup } from "./g2-subgroup.ts";
import { chooseMillerLoopPath, millerLoopVec } from "./mcl-miller-loop-vec.ts";

/** Groth16 proof as snarkjs and iden3 JWZ tokens serialise it (decimal strings, projective z last). */
export interface Groth16Proof {
  pi_a: string[];
  pi_b: string[][];
  pi_c: string[];
}

/** The snarkjs verification key fields a Groth16 check reads. */
export interface Groth16VerificationKeyJson {
  protocol?: string;
  curve?: string;
  nPublic?: number;
  vk_alpha_1: string[];
  vk_beta_2: string[][];
  vk_gamma_2: string[][];
  vk_delta_2: string[][];
  IC: string[][];
}

/** A verification key with everything that does not depend on the proof computed once. */
export interface PreparedVerificationKey {
  readonly ic0: mcl.G1;
  readonly ic: mcl.G1[];
  readonly gamma: mcl.PrecomputedG2;
  readonly delta: mcl.PrecomputedG2;
  /** e(alpha, beta)^-1: the product of the three proof-dependent pairings must equal it. */
  readonly alphaBetaInverse: mcl.GT;
  /** alpha and beta's line coefficients: a batch check pairs (Σ r_i)·alpha with beta in its Miller loop. */
  readonly alpha: mcl.G1;
  readonly beta: mcl.PrecomputedG2;
}

/** A proof whose points are on the curve (B in the subgroup) and whose signals are field elements. */
export interface ParsedGroth16Proof {
  readonly a: mcl.G1;
  readonly b: mcl.G2;
  readonly c: mcl.G1;
  /** Public signals that are not zero, with the index of their IC point. */
  readonly signals: ReadonlyArray<{ index: number; value: mcl.Fr }>;
}

/** BN254 scalar field order r: public inputs must be below it, as in the library verifier. */
export const SCALAR_FIELD_ORDER =
  21888242871839275222246405745257275088548364400416034343698204186575808495617n;

let ready: Promise<void> | undefined;
let initialised = false;

/** mcl holds one curve per process (per worker thread); BN_SNARK1 is alt_bn128, the curve circom uses. */
export function initGroth16(): Promise<void> {
  ready ??= mcl.init(mcl.BN_SNARK1).then(() => {
    // Subgroup membership is checked once, explicitly, in parseG2; G1 of BN254 has cofactor 1, so a point on
    // the curve is in the group and mcl's order check on G1 would only cost a scalar multiplication.
    mcl.verifyOrderG1(false);
    mcl.verifyOrderG2(false);
    chooseMillerLoopPath();
    initialised = true;
  });
  return ready;
}

function assertReady(): void {
  if (!initialised) {
    throw new Error("groth16 verifier used before initGroth16() resolved");
  }
}

function decimal(value: unknown, what: string): string {
  if (typeof value !== "string" || !/^[0-9]{1,80}$/.test(value)) {
    throw new Error(`invalid ${what}: not a decimal field element`);
  }
  return value;
}

/** Affine G1 point from [x, y, z?]; z is ignored like the library does. mcl rejects points off the curve. */
export function parseG1(coords: unknown, what: string): mcl.G1 {
  if (!Array.isArray(coords) || coords.length < 2) throw new Error(`invalid ${what}: expected [x, y]`);
  const point = new mcl.G1();
  try {
    point.setStr(`1 ${decimal(coords[0], what)} ${decimal(coords[1], what)}`, 10);
  } catch {
    throw new Error(`invalid ${what}: point is not on the curve`);
  }
  if (!point.isValid()) throw new Error(`invalid ${what}: point is not on the curve`);
  return point;
}

/** Affine G2 point from [[x.c0, x.c1], [y.c0, y.c1], z?]. */
export function parseG2(coords: unknown, what: string): mcl.G2 {
  if (!Array.isArray(coords) || coords.length < 2 || !Array.isArray(coords[0]) || !Array.isArray(coords[1])) {
    throw new Error(`invalid ${what}: expected [[x0, x1], [y0, y1]]`);
  }
  const [x, y] = coords as unknown[][];
  const parts = [x[0], x[1], y[0], y[1]].map((c) => decimal(c, what));
  const point = new mcl.G2();
  try {
    point.setStr(`1 ${parts.join(" ")}`, 10);
  } catch {
    throw new Error(`invalid ${what}: point is not on the curve`);
  }
  if (!point.isValid()) throw new Error(`invalid ${what}: point is not on the curve`);
  // The twist has a large cofactor: a point on it but outside the r-torsion subgroup must not reach the pairing.
  if (!isInG2Subgroup(point)) throw new Error(`invalid ${what}: point is not in the G2 subgroup`);
  return point;
}

export function prepareVerificationKey(vk: Groth16VerificationKeyJson): PreparedVerificationKey {
  assertReady();
  if (!Array.isArray(vk.IC) || vk.IC.length < 1) throw new Error("verification key has no IC points");
  const alpha = parseG1(vk.vk_alpha_1, "vk_alpha_1");
  const beta = parseG2(vk.vk_beta_2, "vk_beta_2");
  const ic = vk.IC.map((p, i) => parseG1(p, `IC[${i}]`));
  const alphaBeta = mcl.pairing(alpha, beta);
  return {
    ic0: ic[0],
    ic: ic.slice(1),
    gamma: new mcl.PrecomputedG2(parseG2(vk.vk_gamma_2, "vk_gamma_2")),
    delta: new mcl.PrecomputedG2(parseG2(vk.vk_delta_2, "vk_delta_2")),
    alphaBetaInverse: mcl.inv(alphaBeta),
    alpha,
    beta: new mcl.PrecomputedG2(beta),
  };
}

const FIELD_ORDER_DIGITS = SCALAR_FIELD_ORDER.toString().length;

/** The signal as a field element, or undefined for zero (most V3 signals are unused value slots). */
function scalar(signal: unknown, index: number): mcl.Fr | undefined {
  if (typeof signal !== "string" || !/^[0-9]{1,80}$/.test(signal)) {
    throw new Error(`public signal ${index} is not a decimal field element`);
  }
  if (/^0+$/.test(signal)) return undefined;
  if (signal.length >= FIELD_ORDER_DIGITS && BigInt(signal) >= SCALAR_FIELD_ORDER) {
    throw new Error(`Input value is not in the field ${SCALAR_FIELD_ORDER}`);
  }
  const fr = new mcl.Fr();
  fr.setStr(signal, 10);
  return fr;
}

/** Malformed input throws with the library's wording; the result can go to a single or a batch check. */
export function parseGroth16Proof(
  key: PreparedVerificationKey,
  proof: Groth16Proof,
  publicSignals: readonly string[],
): ParsedGroth16Proof {
  assertReady();
  if (!Array.isArray(publicSignals) || publicSignals.length !== key.ic.length) {
    throw new Error(
      `Invalid number of public signals, expected ${key.ic.length} but got ${Array.isArray(publicSignals) ? publicSignals.length : 0}`,
    );
  }
  // Zero signals add nothing to vk_x: the MSM skips them.
  const signals: Array<{ index: number; value: mcl.Fr }> = [];
  publicSignals.forEach((signal, index) => {
    const value = scalar(signal, index);
    if (value) signals.push({ index, value });
  });
  const a = parseG1(proof?.pi_a, "pi_a");
  const b = parseG2(proof?.pi_b, "pi_b");
  const c = parseG1(proof?.pi_c, "pi_c");
  return { a, b, c, signals };
}

/**
 * Groth16 check e(A, B) = e(alpha, beta) · e(vk_x, gamma) · e(C, delta), written as
 * finalExp(ML(-A, B) · ML(C, delta) · ML(vk_x, gamma)) = e(alpha, beta)^-1 so that the fixed G2 points use
 * precomputed line coefficients.
 */
export function verifyParsedGroth16(key: PreparedVerificationKey, proof: ParsedGroth16Proof): boolean {
  const { signals } = proof;
  const vkX =
    signals.length === 0
      ? key.ic0
      : mcl.add(
          key.ic0,
          mcl.mulVec(
            signals.map((s) => key.ic[s.index]),
            signals.map((s) => s.value),
          ),
        );
  const millerAB_CDelta = mcl.precomputedMillerLoop2mixed(mcl.neg(proof.a), proof.b, proof.c, key.delta);
  const millerGamma = mcl.precomputedMillerLoop(vkX, key.gamma);
  return mcl.finalExp(mcl.mul(millerAB_CDelta, millerGamma)).isEqual(key.alphaBetaInverse);
}

/** Malformed input throws; a well-formed proof that does not verify returns false. */
export function verifyGroth16(
  key: PreparedVerificationKey,
  proof: Groth16Proof,
  publicSignals: readonly string[],
): boolean {
  return verifyParsedGroth16(key, parseGroth16Proof(key, proof, publicSignals));
}

/** The random multipliers of a batch check, one per proof. */
export type BatchScalars = (count: number) => mcl.Fr[];

const SCALAR_BYTES = 8;

/**
 * 2^64 + a 64-bit CSPRNG value: never zero (a zero multiplier would drop its proof from the check) and 64 bits of
 * entropy, so proofs crafted to cancel each other out pass with probability 2^-64.
 */
export const randomBatchScalars: BatchScalars = (count) => {
  const bytes = randomFillSync(new Uint8Array(count * SCALAR_BYTES));
  const scalars: mcl.Fr[] = new Array(count);
  const littleEndian = new Uint8Array(SCALAR_BYTES + 1);
  littleEndian[SCALAR_BYTES] = 1;
  for (let i = 0; i < count; i++) {
    littleEndian.set(bytes.subarray(i * SCALAR_BYTES, (i + 1) * SCALAR_BYTES));
    const r = new mcl.Fr();
    r.setLittleEndian(littleEndian);
    scalars[i] = r;
  }
  return scalars;
};

/**
 * The Miller-loop product of one randomized check of proofs of one key: with r_i random,
 * Π e(r_i·A_i, B_i) = e((Σ r_i)·alpha, beta) · e(Σ r_i·vk_x_i, gamma) · e(Σ r_i·C_i, delta).
 * One Miller loop per proof (in one multi-Miller loop), the beta, gamma and delta loops precomputed; its final
 * exponentiation is one when every proof verifies, and otherwise except with probability 2^-64. e(alpha, beta)^(Σ r_i)
 * as a Miller loop costs a quarter of raising the pairing to that power.
 */
function batchMillerProduct(
  key: PreparedVerificationKey,
  proofs: readonly ParsedGroth16Proof[],
  scalars: BatchScalars,
): mcl.GT {
  const r = scalars(proofs.length);
  let rSum = r[0];
  for (let i = 1; i < r.length; i++) rSum = mcl.add(rSum, r[i]);
  // Σ r_i·vk_x_i = (Σ r_i)·IC_0 + Σ_j (Σ_i r_i·s_ij)·IC_j: one MSM over the IC points for the whole batch.
  const icCoefficients = new Map<number, mcl.Fr>();
  proofs.forEach((proof, i) => {
    for (const { index, value } of proof.signals) {
      const term = mcl.mul(r[i], value);
      const sum = icCoefficients.get(index);
      icCoefficients.set(index, sum ? mcl.add(sum, term) : term);
    }
  });
  const icPoints = [key.ic0];
  const icScalars = [rSum];
  for (const [index, coefficient] of icCoefficients) {
    icPoints.push(key.ic[index]);
    icScalars.push(coefficient);
  }
  const vkXSum = mcl.mulVec(icPoints, icScalars);
  const cSum = mcl.mulVec(
    proofs.map((p) => p.c),
    r,
  );
  const millerFixed = mcl.mul(
    mcl.precomputedMillerLoop2(mcl.neg(vkXSum), key.gamma, mcl.neg(cSum), key.delta),
    mcl.precomputedMillerLoop(mcl.neg(mcl.mul(key.alpha, rSum)), key.beta),
  );
  const millerProofs = millerLoopVec(
    proofs.map((proof, i) => mcl.mul(proof.a, r[i])),
    proofs.map((proof) => proof.b),
  );
  return mcl.mul(millerFixed, millerProofs);
}

/**
 * One randomized check of proofs of one key, with one final exponentiation for all. True means every proof
 * verifies except with probability 2^-64; false means at least one does not.
 */
export function verifyGroth16Batch(
  key: PreparedVerificationKey,
  proofs: readonly ParsedGroth16Proof[],
  scalars: BatchScalars = randomBatchScalars,
): boolean {
  if (proofs.length === 0) return true;
  return mcl.finalExp(batchMillerProduct(key, proofs, scalars)).isOne();
}

/**
 * Which proofs of one key verify. A batch that fails is split in halves until the failing proofs are isolated,
 * each then checked alone (exactly, without random scalars): a bad proof never passes and costs the good ones
 * in its batch only a few extra checks.
 */
export function verifyGroth16Each(
  key: PreparedVerificationKey,
  proofs: readonly ParsedGroth16Proof[],
  scalars: BatchScalars = randomBatchScalars,
): boolean[] {
  if (proofs.length === 1) return [verifyParsedGroth16(key, proofs[0])];
  if (verifyGroth16Batch(key, proofs, scalars)) return proofs.map(() => true);
  const half = proofs.length >> 1;
  return [
    ...verifyGroth16Each(key, proofs.slice(0, half), scalars),
    ...verifyGroth16Each(key, proofs.slice(half), scalars),
  ];
}

/** Proofs of one verification key, checked together. */
export interface Groth16KeyBatch {
  key: PreparedVerificationKey;
  proofs: readonly ParsedGroth16Proof[];
}

/**
 * Which proofs verify, for batches of several keys (a token's proofs are of several circuits): the randomized
 * checks of all the batches share one final exponentiation, each with its own random scalars, so the product is one
 * only if every batch's is (except with probability 2^-64). When it is not, each batch is checked on its own as
 * verifyGroth16Each does.
 */
export function verifyGroth16Batches(
  batches: readonly Groth16KeyBatch[],
  scalars: BatchScalars = randomBatchScalars,
): boolean[][] {
  if (batches.length > 1) {
    const product = batches
      .map(({ key, proofs }) => batchMillerProduct(key, proofs, scalars))
      .reduce((all, one) => mcl.mul(all, one));
    if (mcl.finalExp(product).isOne()) return batches.map(({ proofs }) => proofs.map(() => true));
  }
  return batches.map(({ key, proofs }) => verifyGroth16Each(key, proofs, scalars));
}
