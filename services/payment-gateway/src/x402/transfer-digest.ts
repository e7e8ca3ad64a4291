import { hash } from "node:crypto";
import type { Authorization } from "@humanpass/human-proof";
import { isAddress } from "viem";

/** The EIP-712 domain of an EIP-3009 token (USDC's `name` and `version`, its chain and address). */
export type TokenDomain = { name: string; version: string; chainId: number; verifyingContract: string };

const keccak256 = (data: Uint8Array | string): Buffer => hash("keccak-256", data, "buffer");

const DOMAIN_TYPE_HASH = keccak256(
  "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)",
);
// x402's `authorizationTypes`, as EIP-712 encodes a type.
const TRANSFER_TYPE_HASH = keccak256(
  "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)",
);
const UINT256_MAX = (1n << 256n) - 1n;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

function uint256(value: bigint | number): Buffer {
  const n = BigInt(value);
  if (n < 0n || n > UINT256_MAX) throw new RangeError(`${n} is not a uint256`);
  return Buffer.from(n.toString(16).padStart(64, "0"), "hex");
}

function address(value: string): Buffer {
  if (!isAddress(value)) throw new TypeError(`${value} is not an address`);
  return Buffer.from(value.slice(2).padStart(64, "0"), "hex");
}

function bytes32(value: string): Buffer {
  if (!BYTES32.test(value)) throw new TypeError(`${value} is not 32 bytes`);
  return Buffer.from(value.slice(2), "hex");
}

/**
 * The EIP-712 digest an EIP-3009 `TransferWithAuthorization` is signed over: viem's `hashTypedData` with x402's
 * `authorizationTypes`, and like it throws on an address (EIP-55 included), amount or nonce out of its type.
 * Encoded here, the words fixed and the hashing OpenSSL's: viem's generic encoder and JavaScript Keccak were
 * the largest part of the human tier's extra gateway CPU (bench/payment-gateway).
 */
export function transferAuthorizationDigest(domain: TokenDomain, authorization: Authorization): Buffer {
  const domainSeparator = keccak256(
    Buffer.concat([
      DOMAIN_TYPE_HASH,
      keccak256(domain.name),
      keccak256(domain.version),
      uint256(domain.chainId),
      address(domain.verifyingContract),
    ]),
  );
  const structHash = keccak256(
    Buffer.concat([
      TRANSFER_TYPE_HASH,
      address(authorization.from),
      address(authorization.to),
      uint256(BigInt(authorization.value)),
      uint256(BigInt(authorization.validAfter)),
      uint256(BigInt(authorization.validBefore)),
      bytes32(authorization.nonce),
    ]),
  );
  return keccak256(Buffer.concat([Buffer.from([0x19, 0x01]), domainSeparator, structHash]));
}
