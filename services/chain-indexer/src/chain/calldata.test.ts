import {
  decodeFunctionData,
  encodeFunctionData,
  getAddress,
  type Hex,
  maxUint256,
  parseAbi,
  zeroAddress,
  zeroHash,
} from "viem";
import { describe, expect, it } from "vitest";
import { recordAttestationAbi } from "./abi.ts";
import { type AttestationRequest, decodeRecordCall } from "./calldata.ts";

const request = (n: number): AttestationRequest => ({
  schemaId: `0x${n.toString(16).padStart(64, "0")}` as Hex,
  attester: {
    did: "did:iden3:billions:main:2VmAkXrihYaL4eaJ5Vo3ycc5T6PyB1tn2Y3DAbMfPn",
    iden3Id: 123n + BigInt(n),
    ethereumAddress: zeroAddress,
  },
  recipient: {
    did: `did:iden3:billions:main:recipient-${n}`,
    iden3Id: 2n ** 200n + BigInt(n),
    ethereumAddress: getAddress(`0x${"a9".repeat(19)}${n.toString(16).padStart(2, "0")}`),
  },
  expirationTime: 2n ** 64n + BigInt(n),
  revocable: n % 2 === 0,
  refId: zeroHash,
  data: `0x${"ab".repeat(n)}` as Hex,
});

const one = (r: AttestationRequest) =>
  encodeFunctionData({ abi: recordAttestationAbi, functionName: "recordAttestation", args: [r] });
const many = (rs: AttestationRequest[]) =>
  encodeFunctionData({ abi: recordAttestationAbi, functionName: "recordAttestations", args: [rs] });

/** What viem's generic decoder makes of the same calldata. */
function viaViem(input: Hex) {
  const call = decodeFunctionData({ abi: recordAttestationAbi, data: input });
  return call.functionName === "recordAttestation" ? [call.args[0]] : call.args[0];
}

describe("decodeRecordCall", () => {
  it("gives the one request of recordAttestation", () => {
    expect(decodeRecordCall(one(request(1)))).toEqual([request(1)]);
  });

  it("gives the requests of recordAttestations in order", () => {
    const requests = [request(0), request(1), request(2)];
    expect(decodeRecordCall(many(requests))).toEqual(requests);
    expect(decodeRecordCall(many([]))).toEqual([]);
  });

  it("decodes what viem decodes: edge values, unicode, empty strings and data", () => {
    const odd = {
      ...request(40),
      attester: { did: "", iden3Id: maxUint256, ethereumAddress: getAddress(`0x${"ff".repeat(20)}`) },
      recipient: { ...request(40).recipient, did: "did:iden3:ünïcödé:😀\u0000" },
      expirationTime: maxUint256,
      refId: `0x${"ee".repeat(32)}` as Hex,
      data: "0x" as Hex,
    };
    for (const input of [one(odd), many([odd, request(33), odd])])
      expect(decodeRecordCall(input)).toEqual(viaViem(input));
  });

  it("reads strings the way viem does when they are not valid UTF-8", () => {
    const input = one({ ...request(2), recipient: { ...request(2).recipient, did: "XY" } });
    // "XY" is 0x5859; make it 0xff59, which is no UTF-8.
    const broken = input.replace("5859", "ff59") as Hex;
    expect(decodeRecordCall(broken)).toEqual(viaViem(broken));
    expect(decodeRecordCall(broken)![0]!.recipient.did).toBe("\ufffdY");
  });

  it("gives nothing for other calls or calldata that does not decode", () => {
    const revoke = encodeFunctionData({
      abi: parseAbi(["function revokeAttestation(bytes32 id)"]),
      args: [zeroHash],
    });
    const recording = one(request(3));
    expect(decodeRecordCall(revoke)).toBeUndefined();
    expect(decodeRecordCall("0x")).toBeUndefined();
    expect(decodeRecordCall(recording.slice(0, 200) as Hex)).toBeUndefined();
    expect(decodeRecordCall(recording.slice(0, -64) as Hex)).toBeUndefined();
    // The offset of the request, far past the end.
    const farOffset = `${recording.slice(0, 10)}${"ff".repeat(32)}${recording.slice(74)}` as Hex;
    expect(decodeRecordCall(farOffset)).toBeUndefined();
    // A bool that is neither 0 nor 1 (revocable is the request's fifth word).
    const revocableAt = 10 + 64 + 4 * 64;
    const notBool = `${recording.slice(0, revocableAt)}${"00".repeat(31)}02${recording.slice(revocableAt + 64)}`;
    expect(decodeRecordCall(notBool as Hex)).toBeUndefined();
  });
});
