import { beforeAll, describe, expect, it } from "vitest";
import {
  ANY_PROOF_AGE_MS,
  beta1,
  FIXTURE_CONTEXTS_DIR,
  latestStateResolvers,
  stable,
  tokensWithInvalidAuthProof,
  tokenWithOneByteChanged,
} from "../../test/support/fixtures.ts";
import { createDocumentLoader } from "./document-loader.ts";
import { VERIFIER_ENGINES } from "./engine.ts";
import { randomBatchScalars } from "./groth16-mcl.ts";
import {
  ATOMIC_QUERY_V3_CIRCUIT_IDS,
  type AuthorizationRequest,
  createTokenVerifier,
  type TokenVerifier,
} from "./token-verifier.ts";

const documentLoader = createDocumentLoader({ localDirs: [FIXTURE_CONTEXTS_DIR] });
const stateResolvers = latestStateResolvers(stable.network, beta1.network);

function withV3Scope(request: AuthorizationRequest, change: (entry: any) => void): AuthorizationRequest {
  const copy = structuredClone(request);
  for (const entry of copy.body.scope)
    if (ATOMIC_QUERY_V3_CIRCUIT_IDS.includes(entry.circuitId)) change(entry);
  return copy;
}

describe("token verification", () => {
  it("groups the V3 family by the library's circuit sub-versions", () => {
    expect([...ATOMIC_QUERY_V3_CIRCUIT_IDS].sort()).toEqual(
      [
        "credentialAtomicQueryV3",
        "credentialAtomicQueryV3-16-16-64",
        "credentialAtomicQueryV3-beta.1",
      ].sort(),
    );
  });
});

// The JWZ proving methods are per thread and the latest verifier built decides: each engine's block builds its own.
describe.each(VERIFIER_ENGINES)("token verification with engine %s (real fullVerify, offline)", (engine) => {
  let verifierReady: Promise<TokenVerifier>;
  beforeAll(() => {
    verifierReady = createTokenVerifier({
      stateResolvers,
      documentLoader,
      proofMaxAgeMs: ANY_PROOF_AGE_MS,
      engine,
    });
  });

  it("verifies the stable V3 token and reads the nullifier from public signal 4, not the user id", async () => {
    const verifier = await verifierReady;
    const outcome = await verifier.verify(stable.token, stable.request, stable.sessionId);
    expect(outcome.kind).toBe("verified");
    if (outcome.kind !== "verified") return;
    expect(outcome.proof).toEqual({
      nullifier: stable.nullifier,
      nullifierSessionId: stable.nullifierSessionId,
      userDid: stable.userDid,
      userId: "21575127216236248869702276246037557119007466180301957762196593786733007617",
    });
    expect(outcome.response.from).toBe(stable.userDid);
    expect(outcome.response.body.scope.map((s) => s.id)).toEqual([2, 3]);
  });

  it("verifies the beta.1 V3 token of the same family", async () => {
    const verifier = await verifierReady;
    const outcome = await verifier.verify(beta1.token, beta1.request, beta1.sessionId);
    expect(outcome.kind === "verified" && outcome.proof.nullifier).toBe(beta1.nullifier);
  });

  it("leaves the caller's request untouched", async () => {
    const verifier = await verifierReady;
    const request = structuredClone(stable.request);
    await verifier.verify(stable.token, request, stable.sessionId);
    expect(request).toEqual(stable.request);
  });

  it("finds no nullifier proof when no V3 entry answers the session id", async () => {
    const verifier = await verifierReady;
    const outcome = await verifier.verify(stable.token, stable.request, 4n);
    expect(outcome.kind).toBe("no_nullifier_proof");
  });

  it("rejects a token with one byte changed", async () => {
    const verifier = await verifierReady;
    await expect(
      verifier.verify(tokenWithOneByteChanged(stable.token), stable.request, stable.sessionId),
    ).rejects.toThrow();
  });

  it("rejects a request with another nullifierSessionId", async () => {
    const verifier = await verifierReady;
    const request = withV3Scope(stable.request, (entry) => {
      entry.params = { nullifierSessionId: "12346" };
    });
    await expect(verifier.verify(stable.token, request, stable.sessionId)).rejects.toThrow(/nullification/);
  });

  it("rejects an issuer outside allowedIssuers", async () => {
    const verifier = await verifierReady;
    const request = structuredClone(stable.request);
    for (const entry of request.body.scope) entry.query.allowedIssuers = [stable.userDid];
    await expect(verifier.verify(stable.token, request, stable.sessionId)).rejects.toThrow(
      /issuer is not in allowed list/,
    );
  });

  it("rejects a request whose V3 scope id the token does not answer", async () => {
    const verifier = await verifierReady;
    const request = withV3Scope(stable.request, (entry) => {
      entry.id = 9;
    });
    await expect(verifier.verify(stable.token, request, 9n)).rejects.toThrow(
      /proof is not given for requestId 9/,
    );
  });

  it("accepts an issuer state replaced less than 5 minutes ago and refuses one replaced longer ago", async () => {
    const replacedAgo = (ms: number) => async () => ({
      latest: false,
      genesis: false,
      state: null,
      transitionTimestamp: Math.floor((Date.now() - ms) / 1000),
    });
    const latest = async () => ({ latest: true, genesis: false, state: null, transitionTimestamp: 0 });
    const withIssuerState = (ms: number) =>
      createTokenVerifier({
        stateResolvers: { [stable.network]: { resolve: replacedAgo(ms), rootResolve: latest } },
        documentLoader,
        proofMaxAgeMs: ANY_PROOF_AGE_MS,
        engine,
      });
    const recent = await withIssuerState(4 * 60_000);
    expect((await recent.verify(stable.token, stable.request, stable.sessionId)).kind).toBe("verified");
    const stale = await withIssuerState(6 * 60_000);
    await expect(stale.verify(stable.token, stable.request, stable.sessionId)).rejects.toThrow(
      /issuer state is outdated/,
    );
  });

  it("rejects proofs older than the accepted age", async () => {
    const strict = await createTokenVerifier({
      stateResolvers,
      documentLoader,
      proofMaxAgeMs: 60_000,
      engine,
    });
    await expect(strict.verify(stable.token, stable.request, stable.sessionId)).rejects.toThrow(/outdated/);
  });

  it("fails state resolution for a network without a resolver", async () => {
    const noAmoy = await createTokenVerifier({
      stateResolvers: latestStateResolvers("billions:main"),
      documentLoader,
      proofMaxAgeMs: ANY_PROOF_AGE_MS,
      engine,
    });
    await expect(noAmoy.verify(stable.token, stable.request, stable.sessionId)).rejects.toThrow();
  });

  it("refuses each token with an invalid proof among valid ones in flight together, and accepts the valid ones", async () => {
    const verifier = await verifierReady;
    const invalid = tokensWithInvalidAuthProof();
    const tokens = [stable.token, ...invalid.flatMap(({ token }) => [token, stable.token]), beta1.token];
    const outcomes = await Promise.allSettled(
      tokens.map((token) =>
        token === beta1.token
          ? verifier.verify(token, beta1.request, beta1.sessionId)
          : verifier.verify(token, stable.request, stable.sessionId),
      ),
    );
    outcomes.forEach((outcome, i) => {
      const bad = invalid.find(({ token }) => token === tokens[i]);
      if (bad) expect(outcome.status, bad.kind).toBe("rejected");
      else expect(outcome.status === "fulfilled" && outcome.value.kind).toBe("verified");
    });
  });
});

describe("batch engine", () => {
  it("checks the proofs of the tokens in flight in one batch per circuit, refusing only the invalid tokens", async () => {
    const sizes: number[] = [];
    const verifier = await createTokenVerifier({
      stateResolvers,
      documentLoader,
      proofMaxAgeMs: ANY_PROOF_AGE_MS,
      engine: "batch",
      batchScalars: (count) => {
        sizes.push(count);
        return randomBatchScalars(count);
      },
    });
    // Loads the verification keys, as every token after a worker's first finds them.
    await verifier.verify(stable.token, stable.request, stable.sessionId);
    sizes.length = 0;
    const invalid = tokensWithInvalidAuthProof().map(({ token }) => token);
    const tokens = [stable.token, stable.token, ...invalid, stable.token];
    const outcomes = await Promise.allSettled(
      tokens.map((token) => verifier.verify(token, stable.request, stable.sessionId)),
    );
    expect(outcomes.map((o) => o.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "rejected",
      "rejected",
      "rejected",
      "fulfilled",
    ]);
    // Every proof of the six tokens in the first flush, one batch per circuit in one check: the query proofs were
    // checked ahead and the library's later checks found their results. That check fails, so each circuit's batch
    // is checked alone, then only the halves of the failed auth batch.
    expect(sizes.slice(0, 6)).toEqual([6, 6, 6, 6, 6, 6]);
    expect(sizes.slice(6).every((size) => size >= 2 && size <= 3)).toBe(true);
  });

  it("gives the same outcome as the libraries' own Groth16 and Poseidon paths", async () => {
    const batch = await createTokenVerifier({
      stateResolvers,
      documentLoader,
      proofMaxAgeMs: ANY_PROOF_AGE_MS,
    });
    const fast = await batch.verify(stable.token, stable.request, stable.sessionId);
    const library = await createTokenVerifier({
      stateResolvers,
      documentLoader,
      proofMaxAgeMs: ANY_PROOF_AGE_MS,
      engine: "library",
    });
    try {
      expect(await library.verify(stable.token, stable.request, stable.sessionId)).toEqual(fast);
      await expect(
        library.verify(tokenWithOneByteChanged(stable.token), stable.request, stable.sessionId),
      ).rejects.toThrow();
    } finally {
      await createTokenVerifier({ stateResolvers, documentLoader });
    }
  });
});
