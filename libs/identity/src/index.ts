import {
  Blockchain,
  buildDIDType,
  DID,
  DidMethod,
  genesisFromEthAddress,
  Id,
  NetworkId,
} from "@iden3/js-iden3-core";
import { getAddress, hexToBytes, isAddress, toHex } from "viem";

/** Billions networks by EVM chain id; DIDs carry the network label, not the chain id. */
export const BILLIONS_NETWORKS = {
  45056: "main",
  6913: "test",
} as const;

export type BillionsNetwork = (typeof BILLIONS_NETWORKS)[keyof typeof BILLIONS_NETWORKS];

export function networkForChainId(chainId: number): BillionsNetwork {
  const network = BILLIONS_NETWORKS[chainId as keyof typeof BILLIONS_NETWORKS];
  if (!network) throw new Error(`chain id ${chainId} is not a Billions network`);
  return network;
}

function didType(network: BillionsNetwork): Uint8Array {
  return buildDIDType(
    DidMethod.Iden3,
    Blockchain.Billions,
    network === "main" ? NetworkId.Main : NetworkId.Test,
  );
}

function idFromAddress(address: string, network: BillionsNetwork): Id {
  if (!isAddress(address, { strict: false })) throw new Error(`not an EVM address: ${address}`);
  return new Id(didType(network), genesisFromEthAddress(hexToBytes(address as `0x${string}`)));
}

/** The iden3 DID that Billions derives from an EVM address, e.g. `did:iden3:billions:main:…`. */
export function didFromAddress(address: string, network: BillionsNetwork = "main"): string {
  return DID.parseFromId(idFromAddress(address, network)).string();
}

/** The iden3 ID of an address-derived identity, as a decimal string (it does not fit a JS number). */
export function iden3IdFromAddress(address: string, network: BillionsNetwork = "main"): string {
  return idFromAddress(address, network).bigInt().toString();
}

/** The iden3 ID carried by a DID, as a decimal string. Throws on a DID that is not iden3. */
export function iden3IdFromDid(did: string): string {
  return DID.idFromDID(DID.parse(did)).bigInt().toString();
}

/** The EVM address behind an address-derived DID or iden3 ID, or null when the identity is not one. */
export function addressFromIden3Id(iden3Id: string | bigint): `0x${string}` | null {
  try {
    const id = Id.fromBigInt(BigInt(iden3Id));
    const genesis = id.bytes.slice(2, 29);
    if (genesis.slice(0, 7).some((b) => b !== 0)) return null;
    return getAddress(toHex(Id.ethAddressFromId(id)));
  } catch {
    return null;
  }
}

export function addressFromDid(did: string): `0x${string}` | null {
  try {
    return addressFromIden3Id(iden3IdFromDid(did));
  } catch {
    return null;
  }
}

export type IdentityKind = "did" | "ethereumAddress" | "iden3Id";

/** Tells a DID, an Ethereum address and a decimal iden3 ID apart by their format. */
export function identityKind(identity: string): IdentityKind | null {
  if (/^did:[a-z0-9]+:.+/.test(identity)) return "did";
  if (/^0x[0-9a-fA-F]{40}$/.test(identity)) return "ethereumAddress";
  if (/^[0-9]{1,78}$/.test(identity)) return "iden3Id";
  return null;
}
