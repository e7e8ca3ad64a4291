import { describe, expect, it } from "vitest";
import {
  addressFromDid,
  addressFromIden3Id,
  didFromAddress,
  iden3IdFromAddress,
  iden3IdFromDid,
  identityKind,
  networkForChainId,
} from "./index.ts";

const address = "0x6B175474E89094C44Da98b954EedeAC495271d0F";

describe("identity", () => {
  it("derives a Billions DID from an address and back", () => {
    const did = didFromAddress(address);
    expect(did).toMatch(/^did:iden3:billions:main:[1-9A-HJ-NP-Za-km-z]+$/);
    expect(addressFromDid(did)).toBe(address);
    expect(didFromAddress(address.toLowerCase())).toBe(did);
  });

  it("keeps the network label in the DID", () => {
    expect(didFromAddress(address, "test")).toMatch(/^did:iden3:billions:test:/);
    expect(didFromAddress(address, "test")).not.toBe(didFromAddress(address, "main"));
  });

  it("gives the same iden3 ID through the DID and the address", () => {
    const id = iden3IdFromAddress(address);
    expect(id).toMatch(/^[0-9]+$/);
    expect(BigInt(id) > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(iden3IdFromDid(didFromAddress(address))).toBe(id);
    expect(addressFromIden3Id(id)).toBe(address);
  });

  it("maps chain ids to networks", () => {
    expect(networkForChainId(45056)).toBe("main");
    expect(networkForChainId(6913)).toBe("test");
    expect(() => networkForChainId(1)).toThrow(/not a Billions network/);
  });

  it("tells identities apart by format", () => {
    expect(identityKind(didFromAddress(address))).toBe("did");
    expect(identityKind(address)).toBe("ethereumAddress");
    expect(identityKind(iden3IdFromAddress(address))).toBe("iden3Id");
    expect(identityKind("hello")).toBeNull();
    expect(addressFromIden3Id("not-a-number")).toBeNull();
    expect(() => didFromAddress("0x123")).toThrow(/not an EVM address/);
  });
});
