import { type Address, checksumAddress, type Hex, toFunctionSelector } from "viem";
import { recordAttestationAbi } from "./abi";

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
  const words = new Words(Buffer.from(input.slice(2), "hex"));
  try {
    const args = 4 + words.offset(4);
    if (selector === RECORD_ONE) return [words.request(args)];
    const count = words.offset(args);
    const elements = args + 32;
    return Array.from({ length: count }, (_, i) => words.request(elements + words.offset(elements + 32 * i)));
  } catch (error) {
    if (error instanceof MalformedCalldataError) return undefined;
    throw error;
  }
}

class MalformedCalldataError extends Error {}

const utf8 = new TextDecoder();

/** ABI words at byte positions of the calldata; positions and lengths outside it are malformed. */
class Words {
  constructor(private readonly bytes: Buffer) {}

  request(at: number): AttestationRequest {
    return {
      schemaId: this.bytes32(at),
      attester: this.identity(at + this.offset(at + 32)),
      recipient: this.identity(at + this.offset(at + 64)),
      expirationTime: this.uint(at + 96),
      revocable: this.bool(at + 128),
      refId: this.bytes32(at + 160),
      data: `0x${this.dynamic(at + this.offset(at + 192)).toString("hex")}`,
    };
  }

  identity(at: number): RequestIdentity {
    return {
      did: utf8.decode(this.dynamic(at + this.offset(at))),
      iden3Id: this.uint(at + 32),
      ethereumAddress: checksumAddress(`0x${this.word(at + 64).toString("hex", 12)}`),
    };
  }

  bytes32(at: number): Hex {
    return `0x${this.word(at).toString("hex")}`;
  }

  uint(at: number): bigint {
    return BigInt(this.bytes32(at));
  }

  bool(at: number): boolean {
    const value = this.uint(at);
    if (value > 1n) throw new MalformedCalldataError(`not a bool at ${at}`);
    return value === 1n;
  }

  /** An offset or a length: a word small enough to index the calldata. */
  offset(at: number): number {
    const word = this.word(at);
    for (let i = 0; i < 26; i++)
      if (word[i] !== 0) throw new MalformedCalldataError(`offset too large at ${at}`);
    return word.readUIntBE(26, 6);
  }

  /** The contents of a `bytes` or `string` whose length word is at `at`. */
  dynamic(at: number): Buffer {
    return this.slice(at + 32, this.offset(at));
  }

  word(at: number): Buffer {
    return this.slice(at, 32);
  }

  slice(at: number, length: number): Buffer {
    if (at < 0 || at + length > this.bytes.length)
      throw new MalformedCalldataError(`calldata ends before ${at}`);
    return this.bytes.subarray(at, at + length);
  }
}
