import { decodeFunctionData, type Hex } from "viem";
import { recordAttestationAbi } from "./abi";

export type AttestationRequest = Extract<
  ReturnType<typeof decodeFunctionData<typeof recordAttestationAbi>>,
  { functionName: "recordAttestation" }
>["args"][0];

/**
 * The attestation requests a transaction's calldata carries, in the order the registry records them; undefined
 * when the calldata is no recording call (another function, or bytes that do not decode).
 */
export function decodeRecordCall(input: Hex): readonly AttestationRequest[] | undefined {
  let call: ReturnType<typeof decodeFunctionData<typeof recordAttestationAbi>>;
  try {
    call = decodeFunctionData({ abi: recordAttestationAbi, data: input });
  } catch {
    return undefined;
  }
  return call.functionName === "recordAttestation" ? [call.args[0]] : call.args[0];
}
