import { type Address, type Hex, toFunctionSelector } from "viem";
import { recordAttestationAbi } from "./abi.ts";
import { AbiWords, MalformedAbiError } from "./abi-words.ts";

export interface AttestationRequest {
  schemaId: Hex;
  attester: RequestIdentity;
  recipient: RequestIdentity;
  expirationTime: bigint;
  revocable: boolean;
  refId: Hex;
  data: Hex;
}

interface RequestIdentity {
  did: string;
  iden3Id: bigint;
  ethereumAddress: Address;
}

const [RECORD_ONE, RECORD_MANY] = recordAttestationAbi
  .filter((item) => item.type === "function")
  .map((item) => toFunctionSelector(item));

/**
 * The attestation requests a transaction's calldata carries, in the order the registry records them; undefined
 * when the calldata is no recording call (another function, or bytes that do not decode).
 *
 * A decoder for this one layout rather than viem's `decodeFunctionData`: backfills decode every record, and the
 * generic decoder costs several times more CPU. Values come out as viem gives them (checksummed addresses,
 * lowercase hex, strings through `TextDecoder`); `calldata.test.ts` holds it to viem's result.
 */
export function decodeRecordCall(input: Hex): readonly AttestationRequest[] | undefined {
  const selector = input.slice(0, 10);
  if (selector !== RECORD_ONE && selector !== RECORD_MANY) return undefined;
  const words = new AbiWords(input);
  try {
    const args = 4 + words.offset(4);
    if (selector === RECORD_ONE) return [request(words, args)];
    const count = words.offset(args);
    const elements = args + 32;
    return Array.from({ length: count }, (_, i) =>
      request(words, elements + words.offset(elements + 32 * i)),
    );
  } catch (error) {
    if (error instanceof MalformedAbiError) return undefined;
    throw error;
  }
}

function request(words: AbiWords, at: number): AttestationRequest {
  return {
    schemaId: words.bytes32(at),
    attester: identity(words, at + words.offset(at + 32)),
    recipient: identity(words, at + words.offset(at + 64)),
    expirationTime: words.uint(at + 96),
    revocable: words.bool(at + 128),
    refId: words.bytes32(at + 160),
    data: words.hexBytes(at + words.offset(at + 192)),
  };
}

function identity(words: AbiWords, at: number): RequestIdentity {
  return {
    did: words.string(at + words.offset(at)),
    iden3Id: words.uint(at + 32),
    ethereumAddress: words.address(at + 64),
  };
}
