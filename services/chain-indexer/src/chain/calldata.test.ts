import { encodeFunctionData, getAddress, type Hex, parseAbi, zeroAddress, zeroHash } from "viem";
import { describe, expect, it } from "vitest";
import { recordAttestationAbi } from "./abi";
import { decodeRecordCall } from "./calldata";

const request = (n: number) => ({
  schemaId: `0x${n.toString(16).padStart(64, "0")}` as Hex,
  attester: {
    did: "did:iden3:billions:main:2VmAkXrihYaL4eaJ5Vo3ycc5T6PyB1tn2Y3DAbMfPn",
    iden3Id: 123n + BigInt(n),
    ethereumAddress: zeroAddress,
  },
  recipient: {
    did: `did:iden3:billions:main:recipient-${n}`,
    iden3Id: 2n ** 200n + BigInt(n),
    ethereumAddress: getAddress(`0x${"a9".repeat(20)}`),
  },
  expirationTime: 2n ** 64n + BigInt(n),
  revocable: n % 2 === 0,
  refId: zeroHash,
  data: `0x${"ab".repeat(n)}` as Hex,
});

describe("decodeRecordCall", () => {
  it("gives the one request of recordAttestation", () => {
    const input = encodeFunctionData({
      abi: recordAttestationAbi,
      functionName: "recordAttestation",
      args: [request(1)],
    });
    expect(decodeRecordCall(input)).toEqual([request(1)]);
  });

  it("gives the requests of recordAttestations in order", () => {
    const requests = [request(0), request(1), request(2)];
    const input = encodeFunctionData({
      abi: recordAttestationAbi,
      functionName: "recordAttestations",
      args: [requests],
    });
    expect(decodeRecordCall(input)).toEqual(requests);
  });

  it("gives nothing for other calls or calldata that does not decode", () => {
    const revoke = encodeFunctionData({
      abi: parseAbi(["function revokeAttestation(bytes32 id)"]),
      args: [zeroHash],
    });
    const recording = encodeFunctionData({
      abi: recordAttestationAbi,
      functionName: "recordAttestation",
      args: [request(3)],
    });
    expect(decodeRecordCall(revoke)).toBeUndefined();
    expect(decodeRecordCall("0x")).toBeUndefined();
    expect(decodeRecordCall(recording.slice(0, 200) as Hex)).toBeUndefined();
  });
});
