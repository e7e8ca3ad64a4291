import { encodeFunctionData, getAddress, type Hex, keccak256, toHex, zeroAddress, zeroHash } from "viem";
import { describe, expect, it } from "vitest";
import { recordAttestationAbi } from "./abi.ts";
import type { AttestationRequest } from "./calldata.ts";
import type { BlockHeader } from "./headers.ts";
import { type RecordedLog, rebuildRecords } from "./records.ts";
import type { ChainTransaction } from "./transactions.ts";

const registry = getAddress(`0x${"5e".repeat(20)}`);
const multicall = getAddress("0xca11bde05977b3631167028862be2a173976ca11");
const sender = `0x${"c0".repeat(20)}` as const;
const header: BlockHeader = {
  number: 7n,
  hash: keccak256(toHex("block 7")),
  parentHash: zeroHash,
  timestamp: 1_750_000_000n,
};
const txHash = keccak256(toHex("tx"));

const request = (n: number): AttestationRequest => ({
  schemaId: keccak256(toHex(`schema ${n % 2}`)),
  attester: {
    did: `did:iden3:billions:main:attester-${n}`,
    iden3Id: 1_000n + BigInt(n),
    ethereumAddress: zeroAddress,
  },
  recipient: {
    did: `did:iden3:billions:main:recipient-${n}`,
    iden3Id: 2_000n + BigInt(n),
    ethereumAddress: getAddress(`0x${(n + 1).toString(16).padStart(40, "0")}`),
  },
  expirationTime: n === 1 ? 2n ** 64n + 5n : BigInt(n) * 1_000n,
  revocable: n % 2 === 0,
  refId: n === 2 ? keccak256(toHex("ref")) : zeroHash,
  data: n === 0 ? "0x" : toHex(`data ${n}`),
});

/** The AttestationRecorded log the registry emits for a request. */
const logOf = (r: AttestationRequest, n: number, overrides: Partial<RecordedLog["args"]> = {}) =>
  ({
    eventName: "AttestationRecorded",
    address: registry,
    blockNumber: header.number,
    blockHash: header.hash,
    transactionHash: txHash,
    logIndex: n,
    args: {
      id: keccak256(toHex(`id ${n}`)),
      schemaId: r.schemaId,
      attesterIden3Id: r.attester.iden3Id,
      recipientDid: r.recipient.did,
      recipientIden3Id: r.recipient.iden3Id,
      timestamp: header.timestamp,
      ...overrides,
    },
  }) as RecordedLog;

const sentTo = (to: Hex, input: Hex): Map<Hex, ChainTransaction> =>
  new Map([[txHash, { hash: txHash, blockHash: header.hash, from: sender, to, input }]]);

const batch = (requests: AttestationRequest[]) =>
  encodeFunctionData({ abi: recordAttestationAbi, functionName: "recordAttestations", args: [requests] });

const rebuild = (logs: RecordedLog[], transactions: Map<Hex, ChainTransaction>) =>
  rebuildRecords({ registry, logs, transactions, headers: new Map([[header.number, header]]) });

describe("rebuildRecords", () => {
  const requests = [request(0), request(1), request(2)];
  const logs = requests.map((r, n) => logOf(r, n));

  it("rebuilds each record of a call to the registry as the registry stores it", () => {
    const records = rebuild(logs, sentTo(registry, batch(requests)));
    expect([...records.keys()]).toEqual(logs.map((l) => l.args.id));
    expect(records.get(logs[1]!.args.id)).toEqual({
      id: logs[1]!.args.id,
      schemaId: requests[1]!.schemaId,
      creationTime: header.timestamp,
      // uint64(request.expirationTime)
      expirationTime: 5n,
      revocationTime: 0n,
      // A zero attester address is the sender's.
      attester: { ...requests[1]!.attester, ethereumAddress: getAddress(sender) },
      recipient: requests[1]!.recipient,
      revocable: false,
      refId: zeroHash,
      data: toHex("data 1"),
    });
    expect(records.get(logs[0]!.args.id)!.data).toBe("0x");
  });

  it("keeps an attester address given in the request", () => {
    const own = { ...request(4), attester: { ...request(4).attester, ethereumAddress: multicall } };
    const single = encodeFunctionData({
      abi: recordAttestationAbi,
      functionName: "recordAttestation",
      args: [own],
    });
    const records = rebuild([logOf(own, 0)], sentTo(registry, single));
    expect(records.get(logOf(own, 0).args.id)!.attester.ethereumAddress).toBe(multicall);
  });

  it("leaves out records of a transaction sent to another contract", () => {
    expect(rebuild(logs, sentTo(multicall, batch(requests))).size).toBe(0);
  });

  it("leaves out a whole transaction whose requests do not match its logs one to one", () => {
    const swapped = [logs[0]!, logOf(requests[1]!, 1, { recipientDid: "did:other" }), logs[2]!];
    expect(rebuild(swapped, sentTo(registry, batch(requests))).size).toBe(0);
    expect(rebuild(logs, sentTo(registry, batch(requests.slice(0, 2)))).size).toBe(0);
    const otherTime = logs.map((l) => logOf(requests[l.logIndex]!, l.logIndex, { timestamp: 1n }));
    expect(rebuild(otherTime, sentTo(registry, batch(requests))).size).toBe(0);
  });

  it("leaves out records whose transaction is unknown or not a recording call", () => {
    expect(rebuild(logs, new Map()).size).toBe(0);
    expect(rebuild(logs, sentTo(registry, "0x")).size).toBe(0);
  });
});
