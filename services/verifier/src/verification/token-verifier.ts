import type { AuthorizationRequestMessage, AuthorizationResponseMessage } from "@0xpolygonid/js-sdk";
import type { DocumentLoader } from "./document-loader.ts";
import type { VerifierEngine } from "./engine.ts";
import { createGroth16Batcher, type Groth16Batcher } from "./groth16-batcher.ts";
import {
  MclGroth16Prover,
  MemoizedCircuitStorage,
  preparedKey,
  singleGroth16Check,
  useLibraryForJwzAuth,
  useMclForJwzAuth,
} from "./groth16-iden3.ts";
import type { BatchScalars } from "./groth16-mcl.ts";
import { iden3Auth, jsIden3Core, jsSdk, libraryCircuitsDir } from "./iden3-modules.ts";
import { useNodeCryptoForJwzMessageHash } from "./jwz-message-hash.ts";
import { memoizePoseidon } from "./poseidon-memo.ts";

export interface ResolvedState {
  latest: boolean;
  genesis: boolean;
  state: unknown;
  transitionTimestamp: number | string;
}

/** The library's IStateResolver: one per network key (`billions:main`, `polygon:amoy`, …). */
export interface StateResolver {
  resolve(id: bigint, state: bigint): Promise<ResolvedState>;
  rootResolve(state: bigint): Promise<ResolvedState>;
}

export type StateResolvers = Record<string, StateResolver>;

export type AuthorizationRequest = AuthorizationRequestMessage;
export type AuthorizationResponse = AuthorizationResponseMessage;

/** Spec 1: the wallet may prove against an issuer state replaced up to 5 minutes ago. */
export const ACCEPTED_STATE_TRANSITION_DELAY_MS = 300_000;

export interface TokenVerifierOptions {
  stateResolvers: StateResolvers;
  documentLoader: DocumentLoader;
  /** How old a proof may be (`acceptedProofGenerationDelay`); the library default is 24 hours. */
  proofMaxAgeMs?: number;
  /** Default `batch`; both mcl engines also memoise the repeated Poseidon work of a campaign's query. */
  engine?: VerifierEngine;
  /** The random multipliers of the `batch` engine's checks (default: 64 bits from the CSPRNG). */
  batchScalars?: BatchScalars;
  /** Told the number of proofs each batch of the `batch` engine checks together. */
  onBatch?: (proofs: number) => void;
}

export interface VerifiedNullifier {
  nullifier: string;
  nullifierSessionId: string;
  userDid: string;
  /** iden3 id of the user as a decimal string. */
  userId: string;
}

export type VerificationOutcome =
  | { kind: "verified"; response: AuthorizationResponse; proof: VerifiedNullifier }
  | { kind: "no_nullifier_proof"; response: AuthorizationResponse };

export interface TokenVerifier {
  /** Throws when the token does not verify against the request; the error message is safe to return. */
  verify(token: string, request: AuthorizationRequest, sessionId: bigint): Promise<VerificationOutcome>;
}

/** Every circuit id of the atomic-query-V3 family, as the library groups sub-versions. */
export const ATOMIC_QUERY_V3_CIRCUIT_IDS: readonly string[] = [
  ...new Set([
    ...jsSdk.getGroupedCircuitIdsWithSubVersions(jsSdk.CircuitId.AtomicQueryV3Stable),
    ...jsSdk.getGroupedCircuitIdsWithSubVersions(jsSdk.CircuitId.AtomicQueryV3),
  ]),
];

/** Steps 4 and 5 of spec 1: the V3 entry answering this session, and its nullifier (public signal 4). */
export function selectNullifierProof(
  response: AuthorizationResponse,
  sessionId: bigint,
): VerifiedNullifier | undefined {
  const entry = response.body.scope.find(
    (proof) => ATOMIC_QUERY_V3_CIRCUIT_IDS.includes(proof.circuitId) && BigInt(proof.id) === sessionId,
  );
  if (!entry || !response.from) return undefined;
  const signals = new jsSdk.AtomicQueryV3PubSignals().pubSignalsUnmarshal(
    jsSdk.byteEncoder.encode(JSON.stringify(entry.pub_signals)),
  );
  if (signals.nullifier === undefined || BigInt(signals.nullifier) === 0n) return undefined;
  const userDid = jsIden3Core.DID.parse(response.from);
  return {
    nullifier: BigInt(signals.nullifier).toString(),
    nullifierSessionId: BigInt(signals.nullifierSessionID).toString(),
    userDid: userDid.string(),
    userId: jsIden3Core.DID.idFromDID(userDid).bigInt().toString(),
  };
}

export async function createTokenVerifier(options: TokenVerifierOptions): Promise<TokenVerifier> {
  const storage = new MemoizedCircuitStorage(new jsSdk.FSCircuitStorage({ dirname: libraryCircuitsDir }));
  const engine = options.engine ?? "batch";
  const batcher =
    engine === "batch"
      ? createGroth16Batcher({ scalars: options.batchScalars, onFlush: options.onBatch })
      : undefined;
  const check = batcher?.check ?? singleGroth16Check;
  // The JWZ proving-method registry is per thread: the latest verifier built decides for all in this thread.
  if (engine === "library") {
    await useLibraryForJwzAuth();
  } else {
    await useMclForJwzAuth(check);
    memoizePoseidon();
  }
  const suite = {
    documentLoader: options.documentLoader,
    circuitStorage: storage,
    prover:
      engine === "library" ? new jsSdk.NativeProver(storage as never) : new MclGroth16Prover(storage, check),
    packageManager: new jsSdk.PackageManager(),
  };
  const verifier = await iden3Auth.auth.Verifier.newVerifier({
    stateResolver: options.stateResolvers,
    suite: suite as never,
  });
  await verifier.setupAuthZKPPacker(storage as never);
  if (engine !== "library") useNodeCryptoForJwzMessageHash(suite.packageManager);
  const verifyOptions = {
    acceptedStateTransitionDelay: ACCEPTED_STATE_TRANSITION_DELAY_MS,
    ...(options.proofMaxAgeMs === undefined ? {} : { acceptedProofGenerationDelay: options.proofMaxAgeMs }),
  };

  return {
    async verify(token, request, sessionId) {
      if (batcher) void checkQueryProofsAhead(token, storage, batcher);
      // The library writes into the request's params; keep the caller's object intact.
      const response = await verifier.fullVerify(token, structuredClone(request), verifyOptions);
      const proof = selectNullifierProof(response, sessionId);
      return proof ? { kind: "verified", response, proof } : { kind: "no_nullifier_proof", response };
    },
  };
}

/** One directory name of the circuit storage (circuit ids and their sub-versions), never a path. */
const CIRCUIT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/;

/**
 * The library checks a token's auth proof, then each query proof after the previous one's state look-ups: tokens
 * that arrive together would drift apart and batch poorly. Their query proofs are started with the auth proofs;
 * the library's later checks find the results. Anything malformed is left for the library to refuse.
 */
async function checkQueryProofsAhead(
  token: string,
  storage: MemoizedCircuitStorage,
  batcher: Groth16Batcher,
): Promise<void> {
  try {
    const payload = token.split(".")[1];
    if (token.trimStart().startsWith("{") || !payload) return;
    const message = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    const scope: unknown = message?.body?.scope;
    if (!Array.isArray(scope)) return;
    await Promise.all(
      scope.map(async (entry) => {
        if (typeof entry?.circuitId !== "string" || !CIRCUIT_ID.test(entry.circuitId)) return;
        const data = await storage.loadCircuitData(entry.circuitId);
        if (data.verificationKey) {
          batcher.checkAhead(preparedKey(data.verificationKey), entry.proof, entry.pub_signals);
        }
      }),
    );
  } catch {
    // The library parses the token again and reports what is wrong with it.
  }
}
