import type { ProvingMethod, ZKProof } from "@iden3/js-jwz";
import type { Groth16Check } from "./groth16-batcher.ts";
import {
  type Groth16VerificationKeyJson,
  initGroth16,
  type PreparedVerificationKey,
  prepareVerificationKey,
  verifyGroth16,
} from "./groth16-mcl.ts";
import { type JsSdk, jsIden3Core, jsJwz, jsSdk } from "./iden3-modules.ts";

type ICircuitStorage = InstanceType<JsSdk["FSCircuitStorage"]>;
type CircuitData = Awaited<ReturnType<ICircuitStorage["loadCircuitData"]>>;

const textDecoder = new TextDecoder();
const preparedByBytes = new WeakMap<Uint8Array, PreparedVerificationKey>();
const preparedByText = new Map<string, PreparedVerificationKey>();

/** Verification keys are few and fixed: parse and precompute each one once per thread. */
export function preparedKey(verificationKey: Uint8Array): PreparedVerificationKey {
  const known = preparedByBytes.get(verificationKey);
  if (known) return known;
  const text = textDecoder.decode(verificationKey);
  let prepared = preparedByText.get(text);
  if (!prepared) {
    prepared = prepareVerificationKey(JSON.parse(text) as Groth16VerificationKeyJson);
    preparedByText.set(text, prepared);
  }
  preparedByBytes.set(verificationKey, prepared);
  return prepared;
}

/** Keeps loaded verification keys in memory; the library's storage reads the file on every proof. */
export class MemoizedCircuitStorage {
  private readonly loaded = new Map<string, Promise<CircuitData>>();

  private readonly inner: ICircuitStorage;

  constructor(inner: ICircuitStorage) {
    this.inner = inner;
  }

  loadCircuitData(circuitId: Parameters<ICircuitStorage["loadCircuitData"]>[0]): Promise<CircuitData> {
    let data = this.loaded.get(circuitId);
    if (!data) {
      data = this.inner.loadCircuitData(circuitId, { mode: jsSdk.CircuitLoadMode.Verification });
      data.catch(() => this.loaded.delete(circuitId));
      this.loaded.set(circuitId, data);
    }
    return data;
  }

  saveCircuitData(): Promise<void> {
    return Promise.reject(new Error("circuit storage of the verifier is read-only"));
  }
}

/** Each proof checked on its own, as soon as it is asked for. */
export const singleGroth16Check: Groth16Check = async (key, proof, publicSignals) =>
  verifyGroth16(key, proof, publicSignals);

/** The `prover` of the Verifier suite: verifies query proofs with the mcl Groth16 verifier. */
export class MclGroth16Prover {
  private readonly storage: Pick<ICircuitStorage, "loadCircuitData">;
  private readonly check: Groth16Check;

  constructor(storage: Pick<ICircuitStorage, "loadCircuitData">, check: Groth16Check) {
    this.storage = storage;
    this.check = check;
  }

  /** Like the library's NativeProver: any malformed input is an invalid proof. */
  async verify(zkp: ZKProof, circuitId: string): Promise<boolean> {
    try {
      const data = await this.storage.loadCircuitData(
        circuitId as Parameters<ICircuitStorage["loadCircuitData"]>[0],
      );
      if (!data.verificationKey) return false;
      return await this.check(preparedKey(data.verificationKey), zkp.proof, zkp.pub_signals);
    } catch {
      return false;
    }
  }

  generate(): Promise<ZKProof> {
    return Promise.reject(new Error("the verifier does not generate proofs"));
  }
}

/** JWZ proving method for the auth circuits (authV2, authV3, authV3-8-32): same checks, mcl pairing. */
class MclAuthProvingMethod {
  private readonly library: ProvingMethod;
  private readonly check: Groth16Check;

  constructor(library: ProvingMethod, check: Groth16Check) {
    this.library = library;
    this.check = check;
  }

  get methodAlg() {
    return this.library.methodAlg;
  }

  get alg(): string {
    return this.library.alg;
  }

  get circuitId(): string {
    return this.library.circuitId;
  }

  async verify(messageHash: Uint8Array, proof: ZKProof, verificationKey: Uint8Array): Promise<boolean> {
    const signals = proof.pub_signals;
    if (!Array.isArray(signals) || signals.length !== 3) {
      throw new Error(
        `invalid number of Output values expected 3 got ${Array.isArray(signals) ? signals.length : 0}`,
      );
    }
    // Same unmarshalling as the library: a user id with a bad checksum is rejected here.
    jsIden3Core.Id.fromBigInt(BigInt(signals[0]));
    if (BigInt(signals[1]) !== jsIden3Core.fromBigEndian(messageHash)) {
      throw new Error("challenge is not equal to message hash");
    }
    return this.check(preparedKey(verificationKey), proof.proof, signals);
  }

  prove(inputs: Uint8Array, provingKey: Uint8Array, wasm: Uint8Array): Promise<ZKProof> {
    return this.library.prove(inputs, provingKey, wasm);
  }
}

const libraryAuthMethods = (): ProvingMethod[] => [
  jsJwz.proving.provingMethodGroth16AuthV2Instance,
  jsJwz.proving.provingMethodGroth16AuthV3Instance,
  jsJwz.proving.provingMethodGroth16AuthV3_8_32Instance,
];

/**
 * js-jwz keeps one registry of proving methods per module instance (here: per worker thread). Replacing the
 * auth methods routes JWZ envelope verification through mcl for every Verifier in this thread.
 */
export async function useMclForJwzAuth(check: Groth16Check): Promise<void> {
  await initGroth16();
  for (const method of libraryAuthMethods()) {
    const fast = new MclAuthProvingMethod(method, check) as unknown as ProvingMethod;
    await jsJwz.proving.registerProvingMethod(method.methodAlg, () => fast);
  }
}

/** Puts the library's own auth proving methods back (used to compare both paths in one process). */
export async function useLibraryForJwzAuth(): Promise<void> {
  for (const method of libraryAuthMethods()) {
    await jsJwz.proving.registerProvingMethod(method.methodAlg, () => method);
  }
}
