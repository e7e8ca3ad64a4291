import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as mcl from "mcl-wasm";
import { beforeAll, describe, expect, it } from "vitest";
import { beta1, decodeToken, stable } from "../../test/support/fixtures";
import {
  type Groth16VerificationKeyJson,
  initGroth16,
  parseG1,
  parseG2,
  prepareVerificationKey,
  SCALAR_FIELD_ORDER,
  verifyGroth16,
} from "./groth16-mcl";
import { jsJwz, libraryCircuitsDir } from "./iden3-modules";

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
  const fp2 = (a: number, b: number) => {
    const v = new mcl.Fp2();
    v.setInt(a, b);
    return v;
  };
  const twistB = mcl.div(fp2(3, 0), fp2(9, 1));
  for (let a = 1; ; a++) {
    const x = fp2(a, 0);
    const [isSquare, y] = mcl.squareRoot(mcl.add(mcl.mul(mcl.sqr(x), x), twistB));
    if (!isSquare) continue;
    const point = new mcl.G2();
    point.setX(x);
    point.setY(y);
    point.setZ(fp2(1, 0));
    if (point.isValid() && !point.isValidOrder()) {
      return [
        [x.get_a().getStr(10), x.get_b().getStr(10)],
        [y.get_a().getStr(10), y.get_b().getStr(10)],
        ["1", "0"],
      ];
    }
  }
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
