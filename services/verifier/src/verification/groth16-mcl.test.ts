import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as mcl from "mcl-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { beta1, decodeToken, stable } from "../../test/support/fixtures.ts";
import { twistPoints } from "../../test/support/twist-points.ts";
import { createGroth16Batcher } from "./groth16-batcher.ts";
import {
  type BatchScalars,
  type Groth16VerificationKeyJson,
  initGroth16,
  parseG1,
  parseG2,
  parseGroth16Proof,
  prepareVerificationKey,
  randomBatchScalars,
  SCALAR_FIELD_ORDER,
  verifyGroth16,
  verifyGroth16Batch,
  verifyGroth16Batches,
  verifyGroth16Each,
} from "./groth16-mcl.ts";
import { jsJwz, libraryCircuitsDir } from "./iden3-modules.ts";

interface FixtureProof {
  name: string;
  circuitId: string;
  proof: { pi_a: string[]; pi_b: string[][]; pi_c: string[]; protocol: string };
  pub_signals: string[];
}

const BASE_FIELD_ORDER = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;

function fixtureProofs(): FixtureProof[] {
  const proofs: FixtureProof[] = [];
  for (const [name, token] of [
    ["stable", stable.token],
    ["beta1", beta1.token],
  ] as const) {
    const { header, payload, authProof } = decodeToken(token);
    proofs.push({ name: `${name} ${header.circuitId}`, circuitId: header.circuitId, ...authProof });
    for (const entry of payload.body.scope) {
      proofs.push({
        name: `${name} ${entry.circuitId}`,
        circuitId: entry.circuitId,
        proof: entry.proof,
        pub_signals: entry.pub_signals,
      });
    }
  }
  return proofs;
}

function verificationKey(circuitId: string): Groth16VerificationKeyJson {
  return JSON.parse(readFileSync(join(libraryCircuitsDir, circuitId, "verification_key.json"), "utf8"));
}

/** A verifier rejects when it returns false or throws; both make the library's callers refuse the token. */
async function rejects(check: () => boolean | Promise<boolean>): Promise<boolean> {
  try {
    return (await check()) === false;
  } catch {
    return true;
  }
}

const proofs = fixtureProofs();
/** Tampering runs the slow library verifier too: one auth proof and one query proof are enough. */
const tamperTargets = [
  proofs[0],
  proofs.find((p) => p.circuitId.startsWith("credentialAtomicQueryV3")) as FixtureProof,
];
const preparedKeys = new Map<string, ReturnType<typeof prepareVerificationKey>>();
const preparedKey = (circuitId: string) => {
  let key = preparedKeys.get(circuitId);
  if (!key) {
    key = prepareVerificationKey(verificationKey(circuitId));
    preparedKeys.set(circuitId, key);
  }
  return key;
};
const byLibrary = (p: FixtureProof) => () =>
  jsJwz.verifyGroth16Proof(
    { proof: p.proof, pub_signals: p.pub_signals },
    verificationKey(p.circuitId) as never,
  );
const byMcl = (p: FixtureProof) => () => verifyGroth16(preparedKey(p.circuitId), p.proof, p.pub_signals);

function tampered(p: FixtureProof, change: (copy: FixtureProof) => void): FixtureProof {
  const copy = structuredClone(p);
  change(copy);
  return copy;
}

const plusOne = (value: string) => (BigInt(value) + 1n).toString();

/** A point on the twist y² = x³ + 3/(9+u) that is not in the order-r subgroup (the twist's cofactor is huge). */
function twistPointOutsideSubgroup(): string[][] {
  const point = twistPoints(10).find((p) => p.isValid() && !p.isValidOrder()) as mcl.G2;
  const [x, y] = [point.getX(), point.getY()];
  return [
    [x.get_a().getStr(10), x.get_b().getStr(10)],
    [y.get_a().getStr(10), y.get_b().getStr(10)],
    ["1", "0"],
  ];
}

const tamperings: Array<[string, (p: FixtureProof) => void]> = [
  [
    "a changed public signal",
    (p) => {
      p.pub_signals[1] = plusOne(p.pub_signals[1]);
    },
  ],
  [
    "a public input equal to the field order",
    (p) => {
      p.pub_signals[0] = SCALAR_FIELD_ORDER.toString();
    },
  ],
  [
    "a public input shifted by the field order (same value mod r)",
    (p) => {
      p.pub_signals[2] = (BigInt(p.pub_signals[2]) + SCALAR_FIELD_ORDER).toString();
    },
  ],
  [
    "pi_a off the curve",
    (p) => {
      p.proof.pi_a[1] = plusOne(p.proof.pi_a[1]);
    },
  ],
  [
    "pi_b off the curve",
    (p) => {
      p.proof.pi_b[0][0] = plusOne(p.proof.pi_b[0][0]);
    },
  ],
  [
    "pi_b on the twist but outside the G2 subgroup",
    (p) => {
      p.proof.pi_b = twistPointOutsideSubgroup();
    },
  ],
  [
    "pi_c off the curve",
    (p) => {
      p.proof.pi_c[0] = plusOne(p.proof.pi_c[0]);
    },
  ],
  [
    "pi_a with a coordinate at the base field order",
    (p) => {
      p.proof.pi_a[0] = BASE_FIELD_ORDER.toString();
    },
  ],
  [
    "pi_a and pi_c swapped",
    (p) => {
      [p.proof.pi_a, p.proof.pi_c] = [p.proof.pi_c, p.proof.pi_a];
    },
  ],
  [
    "pi_a negated (on the curve, wrong proof)",
    (p) => {
      p.proof.pi_a[1] = (BASE_FIELD_ORDER - BigInt(p.proof.pi_a[1])).toString();
    },
  ],
  [
    "one public signal missing",
    (p) => {
      p.pub_signals.pop();
    },
  ],
  [
    "a non-numeric public signal",
    (p) => {
      p.pub_signals[0] = "0x12";
    },
  ],
];

describe("Groth16 verifier on mcl-wasm", () => {
  beforeAll(() => initGroth16());

  it("covers every proof of the fixture tokens (auth and query circuits)", () => {
    expect(proofs.map((p) => p.circuitId).sort()).toEqual(
      [
        "authV2",
        "authV3-8-32",
        "credentialAtomicQueryV3-16-16-64",
        "credentialAtomicQueryV3-beta.1",
        "credentialAtomicQueryV3-beta.1",
        "linkedMultiQuery3",
      ].sort(),
    );
  });

  it.each(proofs.map((p) => [p.name, p] as const))("accepts %s, as the library does", (_name, proof) => {
    expect(byLibrary(proof)()).toBe(true);
    expect(byMcl(proof)()).toBe(true);
  });

  describe.each(tamperings)("rejects %s, as the library does", (_name, change) => {
    it.each(tamperTargets.map((p) => [p.name, p] as const))("%s", async (_proofName, proof) => {
      const bad = tampered(proof, change);
      expect(await rejects(byLibrary(bad))).toBe(true);
      expect(await rejects(byMcl(bad))).toBe(true);
    });
  });

  it("refuses points off the curve and G2 points outside the subgroup before any pairing", () => {
    const [auth] = proofs;
    expect(() => parseG1([auth.proof.pi_a[0], plusOne(auth.proof.pi_a[1])], "pi_a")).toThrow(
      /not on the curve/,
    );
    expect(() => parseG2(twistPointOutsideSubgroup(), "pi_b")).toThrow(/not in the G2 subgroup/);
    expect(parseG2(auth.proof.pi_b, "pi_b").isValidOrder()).toBe(true);
  });

  it("rejects a proof checked against another circuit's key", () => {
    const [auth, query] = proofs;
    const key = prepareVerificationKey(verificationKey(auth.circuitId));
    expect(() => verifyGroth16(key, query.proof, query.pub_signals)).toThrow(/public signals/);
    expect(verifyGroth16(key, query.proof, auth.pub_signals)).toBe(false);
  });
});

const g1Coords = (point: mcl.G1) => {
  const p = mcl.normalize(point);
  return [p.getX().getStr(10), p.getY().getStr(10), "1"];
};
const g2Coords = (point: mcl.G2) => {
  const p = mcl.normalize(point);
  const fp2 = (v: mcl.Fp2) => [v.get_a().getStr(10), v.get_b().getStr(10)];
  return [fp2(p.getX()), fp2(p.getY()), ["1", "0"]];
};

/** Another valid proof of the same statement: (A/t, t·B, C) for a random t keeps e(A, B) unchanged. */
function rerandomized(p: FixtureProof): FixtureProof {
  const t = new mcl.Fr();
  t.setByCSPRNG();
  const copy = structuredClone(p);
  copy.proof.pi_a = g1Coords(mcl.mul(parseG1(p.proof.pi_a, "pi_a"), mcl.inv(t)));
  copy.proof.pi_b = g2Coords(mcl.mul(parseG2(p.proof.pi_b, "pi_b"), t));
  return copy;
}

/** Batch scalars that record the size of each batch check. */
function observedScalars(sizes: number[], scalars: BatchScalars = randomBatchScalars): BatchScalars {
  return (count) => {
    sizes.push(count);
    return scalars(count);
  };
}

const ones: BatchScalars = (count) =>
  Array.from({ length: count }, () => {
    const one = new mcl.Fr();
    one.setInt(1);
    return one;
  });

describe("batch Groth16 verification (one key, random scalars)", () => {
  beforeAll(() => initGroth16());
  const authV3 = () => proofs.find((p) => p.circuitId === "authV3-8-32") as FixtureProof;
  const authV2 = () => proofs.find((p) => p.circuitId === "authV2") as FixtureProof;
  const parsed = (p: FixtureProof) => parseGroth16Proof(preparedKey(p.circuitId), p.proof, p.pub_signals);

  it("accepts a batch of distinct valid proofs in one check", () => {
    const batch = Array.from({ length: 8 }, () => parsed(rerandomized(authV3())));
    expect(new Set(batch.map((p) => p.a.getStr(16))).size).toBe(8);
    const sizes: number[] = [];
    expect(verifyGroth16Each(preparedKey("authV3-8-32"), batch, observedScalars(sizes))).toEqual(
      Array(8).fill(true),
    );
    expect(sizes).toEqual([8]);
  });

  it("finds each invalid proof in a batch of valid ones: tampered proof, wrong signals, another circuit's proof", () => {
    const valid = authV3();
    const tamperedProof = tampered(valid, (p) => {
      p.proof.pi_a[1] = (BASE_FIELD_ORDER - BigInt(p.proof.pi_a[1])).toString();
    });
    const wrongSignals = tampered(valid, (p) => {
      p.pub_signals[2] = plusOne(p.pub_signals[2]);
    });
    // authV2 and authV3-8-32 both have three public signals: the proof parses against the other key.
    const otherCircuit = { ...authV2(), circuitId: "authV3-8-32" };
    const batch = [valid, tamperedProof, valid, wrongSignals, valid, otherCircuit, valid, valid].map((p) =>
      parsed(p.circuitId === valid.circuitId ? rerandomized(p) : p),
    );
    const sizes: number[] = [];
    expect(verifyGroth16Each(preparedKey("authV3-8-32"), batch, observedScalars(sizes))).toEqual([
      true,
      false,
      true,
      false,
      true,
      false,
      true,
      true,
    ]);
    expect(sizes[0]).toBe(8);
  });

  it("needs its random scalars: with all scalars 1 two compensating invalid proofs pass, with random ones they do not", () => {
    const valid = authV3();
    const key = preparedKey(valid.circuitId);
    // C + D and C - D: each proof is wrong by D, the sum of the Cs (all that scalars 1 see) is right.
    const d = key.ic[0];
    const shiftedC = (sign: 1 | -1) =>
      tampered(valid, (p) => {
        const c = parseG1(valid.proof.pi_c, "pi_c");
        p.proof.pi_c = g1Coords(sign === 1 ? mcl.add(c, d) : mcl.sub(c, d));
      });
    const [plus, minus] = [shiftedC(1), shiftedC(-1)];
    expect(verifyGroth16(key, plus.proof, plus.pub_signals)).toBe(false);
    expect(verifyGroth16(key, minus.proof, minus.pub_signals)).toBe(false);
    const batch = [valid, plus, minus, valid].map(parsed);
    expect(verifyGroth16Batch(key, batch, ones)).toBe(true);
    expect(verifyGroth16Batch(key, batch)).toBe(false);
    expect(verifyGroth16Each(key, batch)).toEqual([true, false, false, true]);
  });

  it("checks batches of several keys in one check, and finds an invalid proof of one key among them", () => {
    const auth = authV3();
    const query = tamperTargets[1];
    const batchOf = (p: FixtureProof, count: number) => ({
      key: preparedKey(p.circuitId),
      proofs: Array.from({ length: count }, () => parsed(rerandomized(p))),
    });
    const sizes: number[] = [];
    expect(verifyGroth16Batches([batchOf(auth, 3), batchOf(query, 2)], observedScalars(sizes))).toEqual([
      [true, true, true],
      [true, true],
    ]);
    expect(sizes).toEqual([3, 2]);

    const wrongSignals = tampered(query, (p) => {
      p.pub_signals[0] = plusOne(p.pub_signals[0]);
    });
    const withBad = batchOf(query, 2);
    withBad.proofs = [withBad.proofs[0], parsed(wrongSignals), withBad.proofs[1]];
    expect(verifyGroth16Batches([batchOf(auth, 3), withBad])).toEqual([
      [true, true, true],
      [true, false, true],
    ]);
  });

  it("needs random scalars across keys too: with all scalars 1, proofs wrong by D and by -D under two keys pass together", () => {
    const valid = authV3();
    // Two keys with the same points: the check cannot tell them apart, only the scalars keep the batches apart.
    const keys = [preparedKey(valid.circuitId), prepareVerificationKey(verificationKey(valid.circuitId))];
    const d = keys[0].ic[0];
    const shiftedC = (sign: 1 | -1) =>
      parsed(
        tampered(valid, (p) => {
          const c = parseG1(valid.proof.pi_c, "pi_c");
          p.proof.pi_c = g1Coords(sign === 1 ? mcl.add(c, d) : mcl.sub(c, d));
        }),
      );
    const batches = () => [
      { key: keys[0], proofs: [parsed(valid), shiftedC(1)] },
      { key: keys[1], proofs: [shiftedC(-1), parsed(valid)] },
    ];
    expect(verifyGroth16Batches(batches(), ones)).toEqual([
      [true, true],
      [true, true],
    ]);
    expect(verifyGroth16Batches(batches())).toEqual([
      [true, false],
      [false, true],
    ]);
  });

  describe.each(tamperings)(
    "rejects %s in a batch of valid proofs, accepting the others",
    (_name, change) => {
      it.each(tamperTargets.map((p) => [p.name, p] as const))("%s", async (_proofName, proof) => {
        const sizes: number[] = [];
        const { check } = createGroth16Batcher({ scalars: observedScalars(sizes) });
        const key = preparedKey(proof.circuitId);
        const submit = (p: FixtureProof) => check(key, p.proof, p.pub_signals);
        const bad = tampered(proof, change);
        const results = await Promise.allSettled([
          submit(rerandomized(proof)),
          submit(bad),
          submit(rerandomized(proof)),
          submit(rerandomized(proof)),
        ]);
        const [first, refused, ...others] = results;
        for (const result of [first, ...others]) expect(result).toEqual({ status: "fulfilled", value: true });
        expect(refused.status === "rejected" || refused.value === false).toBe(true);
        expect(sizes[0]).toBeGreaterThanOrEqual(3);
      });
    },
  );
});

describe("Groth16 batcher (the checks asked for before the thread is free again)", () => {
  beforeAll(() => initGroth16());

  it("checks a lone proof on its own, without random scalars", async () => {
    const sizes: number[] = [];
    const { check } = createGroth16Batcher({ scalars: observedScalars(sizes) });
    const [auth] = proofs;
    expect(await check(preparedKey(auth.circuitId), auth.proof, auth.pub_signals)).toBe(true);
    expect(sizes).toEqual([]);
  });

  it("batches per verification key and caps a batch", async () => {
    const sizes: number[] = [];
    const { check } = createGroth16Batcher({ maxBatch: 5, scalars: observedScalars(sizes) });
    const stableProofs = proofs.filter((p) => p.name.startsWith("stable"));
    const submitted = stableProofs.flatMap((p) =>
      Array.from({ length: 7 }, () => check(preparedKey(p.circuitId), p.proof, p.pub_signals)),
    );
    expect(await Promise.all(submitted)).toEqual(Array(submitted.length).fill(true));
    expect(sizes.sort()).toEqual(Array(stableProofs.length).fill([2, 5]).flat().sort());
  });
});
