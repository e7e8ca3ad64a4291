import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type {
  AuthorizationRequest,
  ResolvedState,
  StateResolvers,
} from "../../src/verification/token-verifier.ts";

/** The public iden3 V3 test vectors, with their provenance in the folder's README.md. */
const FIXTURES = new URL("../fixtures/iden3-v3/", import.meta.url);
export const FIXTURE_CONTEXTS_DIR = fileURLToPath(new URL("contexts", FIXTURES));

const read = (name: string) => readFileSync(new URL(name, FIXTURES), "utf8");

export const stable = {
  token: read("stable_authV3_8_32_token.txt").trim(),
  request: JSON.parse(read("stable_request_lmq.json")) as AuthorizationRequest,
  /** scope id of the V3 proof in the token */
  sessionId: 3n,
  nullifier: "5113110742163561161681110600858018886440291288962681233429975133916348606521",
  nullifierSessionId: "12345",
  userDid: "did:iden3:polygon:amoy:x7Z95VkUuyo6mqraJw2VGwCfqTzdqhM1RVjRHzcpK",
  network: "polygon:amoy",
};

export const beta1 = {
  token: read("beta1_authV2_token.txt").trim(),
  request: JSON.parse(read("beta1_request.json")) as AuthorizationRequest,
  /** the README says 3, but the token's nullifier-carrying V3 entry has scope id 2 */
  sessionId: 2n,
  nullifier: "8285708881737017137038361778766846594892825647170325230050745886714530437807",
  nullifierSessionId: "12345",
  network: "polygon:mumbai",
};

/** Proofs are from 2023–2025: tests accept any age (the library default is 24 hours). */
export const ANY_PROOF_AGE_MS = 1e13;

const latest = async (): Promise<ResolvedState> => ({
  latest: true,
  genesis: false,
  state: null,
  transitionTimestamp: 0,
});

/** A state resolver that answers "this is the latest state" for every identity and GIST root. */
export function latestStateResolvers(...networks: string[]): StateResolvers {
  return Object.fromEntries(networks.map((n) => [n, { resolve: latest, rootResolve: latest }]));
}

/** The three segments of a compact JWZ: header, payload and the auth proof, each decoded. */
export function decodeToken(token: string): { header: any; payload: any; authProof: any } {
  const [h, p, z] = token.split(".");
  const decode = (s: string) => JSON.parse(Buffer.from(s, "base64url").toString("utf8"));
  return { header: decode(h), payload: decode(p), authProof: decode(z) };
}

/** The token with one byte of its proof segment changed (still valid base64url). */
export function tokenWithOneByteChanged(token: string): string {
  const [h, p, z] = token.split(".");
  const bytes = Buffer.from(z, "base64url");
  const at = bytes.indexOf(Buffer.from("pi_a")) + 12; // inside the first digits of pi_a[0]
  bytes[at] = bytes[at] === 0x31 ? 0x32 : 0x31;
  return [h, p, bytes.toString("base64url")].join(".");
}

/** The token with its auth proof segment (proof and public signals, not covered by the message hash) changed. */
export function tokenWithAuthProof(token: string, change: (authProof: any) => void): string {
  const [h, p, z] = token.split(".");
  const authProof = JSON.parse(Buffer.from(z, "base64url").toString("utf8"));
  change(authProof);
  return [h, p, Buffer.from(JSON.stringify(authProof)).toString("base64url")].join(".");
}

const BN254_BASE_FIELD_ORDER = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;

/**
 * Tokens whose auth proof passes every check before the pairing and fails the pairing: the kinds of bad proof a
 * batch check must single out.
 */
export function tokensWithInvalidAuthProof(): Array<{ kind: string; token: string }> {
  const otherCircuitProof = decodeToken(beta1.token).authProof.proof;
  return [
    {
      kind: "tampered proof (pi_a negated)",
      token: tokenWithAuthProof(stable.token, (auth) => {
        auth.proof.pi_a[1] = (BN254_BASE_FIELD_ORDER - BigInt(auth.proof.pi_a[1])).toString();
      }),
    },
    {
      kind: "wrong public signals (GIST root + 1)",
      token: tokenWithAuthProof(stable.token, (auth) => {
        auth.pub_signals[2] = (BigInt(auth.pub_signals[2]) + 1n).toString();
      }),
    },
    {
      kind: "proof from another circuit (authV2)",
      token: tokenWithAuthProof(stable.token, (auth) => {
        auth.proof = otherCircuitProof;
      }),
    },
  ];
}
