import {
  encodeAbiParameters,
  encodeEventTopics,
  type Hex,
  keccak256,
  parseAbiParameters,
  parseEventLogs,
  type RpcLog,
  toHex,
} from "viem";
import { describe, expect, it } from "vitest";
import { indexedEventsAbi } from "./abi.ts";
import { decodeRecorded, type RegistryLog, wholeBlocksWithin } from "./logs.ts";

const logsIn = (...blocks: number[]) => blocks.map((b) => ({ blockNumber: BigInt(b) }) as RegistryLog);

describe("wholeBlocksWithin", () => {
  it("keeps every log when they fit", () => {
    expect(wholeBlocksWithin(logsIn(1, 1, 2), 3)).toBe(3);
  });

  it("ends at the last whole block that fits", () => {
    expect(wholeBlocksWithin(logsIn(1, 1, 2, 2, 2, 3), 4)).toBe(2);
    expect(wholeBlocksWithin(logsIn(1, 2, 3, 3), 3)).toBe(2);
    expect(wholeBlocksWithin(logsIn(1, 2, 3, 4), 3)).toBe(3);
  });

  it("keeps a first block larger than the limit whole", () => {
    expect(wholeBlocksWithin(logsIn(5, 5, 5, 6), 2)).toBe(3);
  });
});

describe("decodeRecorded", () => {
  const event = indexedEventsAbi.find((item) => item.name === "AttestationRecorded")!;
  const rpcLog = (recipientDid: string, data?: Hex): RpcLog => ({
    address: "0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e",
    blockHash: keccak256(toHex("block")),
    blockNumber: "0x2a",
    data:
      data ??
      encodeAbiParameters(parseAbiParameters("uint256, string, uint256, uint256"), [
        2n ** 255n + 1n,
        recipientDid,
        7n,
        1_750_000_000n,
      ]),
    logIndex: "0x3",
    transactionHash: keccak256(toHex("tx")),
    transactionIndex: "0x0",
    removed: false,
    topics: encodeEventTopics({
      abi: [event],
      args: { id: keccak256(toHex("id")), schemaId: keccak256(toHex("schema")) },
    }) as RpcLog["topics"],
  });
  const viaViem = (log: RpcLog) => parseEventLogs({ abi: indexedEventsAbi, logs: [log], strict: true });

  it("decodes what viem decodes", () => {
    for (const did of ["did:iden3:billions:main:2VmAkXrihYaL4eaJ5Vo3ycc5T6PyB1tn2Y3DAbMfPn", "", "dïd 😀"]) {
      const log = rpcLog(did);
      expect([decodeRecorded(log)]).toEqual(viaViem(log));
    }
  });

  it("drops a log that does not decode, as viem's strict decoding does", () => {
    const truncated = rpcLog("did", rpcLog("did").data.slice(0, 2 + 64 * 3) as Hex);
    expect(decodeRecorded(truncated)).toBeUndefined();
    expect(viaViem(truncated)).toEqual([]);
    const unindexed = { ...rpcLog("did"), topics: rpcLog("did").topics.slice(0, 2) } as RpcLog;
    expect(decodeRecorded(unindexed)).toBeUndefined();
  });
});
