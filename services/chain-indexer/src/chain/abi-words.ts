import { type Address, checksumAddress, type Hex } from "viem";

/** Bytes that do not decode as the layout they were read as. */
export class MalformedAbiError extends Error {
  override name = "MalformedAbiError";
}

const utf8 = new TextDecoder();

/**
 * ABI-encoded bytes read at byte positions, for decoders of one fixed layout. Values come out as viem's decoders
 * give them: lowercase hex, bigints, checksummed addresses, strings through `TextDecoder`. A position, offset or
 * length outside the bytes, or a bool other than 0 or 1, throws MalformedAbiError.
 */
export class AbiWords {
  private readonly bytes: Buffer;
  /** Checksummed addresses by their lowercase hex: a batch repeats its attesters. */
  private readonly addresses = new Map<string, Address>();

  constructor(hex: Hex) {
    this.bytes = Buffer.from(hex.slice(2), "hex");
  }

  bytes32(at: number): Hex {
    return `0x${this.word(at).toString("hex")}`;
  }

  uint(at: number): bigint {
    return BigInt(this.bytes32(at));
  }

  bool(at: number): boolean {
    const value = this.uint(at);
    if (value > 1n) throw new MalformedAbiError(`not a bool at ${at}`);
    return value === 1n;
  }

  address(at: number): Address {
    const lower = this.word(at).toString("hex", 12);
    let address = this.addresses.get(lower);
    if (!address) {
      address = checksumAddress(`0x${lower}`);
      this.addresses.set(lower, address);
    }
    return address;
  }

  /** An offset or a length: a word small enough to index the bytes. */
  offset(at: number): number {
    const word = this.word(at);
    for (let i = 0; i < 26; i++) if (word[i] !== 0) throw new MalformedAbiError(`offset too large at ${at}`);
    return word.readUIntBE(26, 6);
  }

  /** The `string` whose length word is at `at`. */
  string(at: number): string {
    return utf8.decode(this.dynamic(at));
  }

  /** The `bytes` whose length word is at `at`. */
  hexBytes(at: number): Hex {
    return `0x${this.dynamic(at).toString("hex")}`;
  }

  private dynamic(at: number): Buffer {
    return this.slice(at + 32, this.offset(at));
  }

  private word(at: number): Buffer {
    return this.slice(at, 32);
  }

  private slice(at: number, length: number): Buffer {
    if (at < 0 || at + length > this.bytes.length)
      throw new MalformedAbiError(`data ends before ${at + length}`);
    return this.bytes.subarray(at, at + length);
  }
}
