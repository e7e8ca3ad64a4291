import {
  type Devnet,
  identityFromAddress,
  recordAttestation,
  registerSchema,
  startDevnet,
  type Transacted,
} from "@humanpass/devnet";
import { createPublicClient, getAddress, type Hex, http, keccak256, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchTransactions } from "../src/chain/transactions.ts";

let devnet: Devnet;
let small: Transacted[];
let large: Transacted;

beforeAll(async () => {
  devnet = await startDevnet();
  const schemaId = (await registerSchema(devnet, { name: "Blob", schema: "bytes data" })).id;
  const record = (n: number, data: Hex) =>
    recordAttestation(devnet, {
      schemaId,
      attester: identityFromAddress(devnet.accounts[1]!.address),
      recipient: identityFromAddress(`0x${(0xb10b00 + n).toString(16).padStart(40, "0")}`),
      data,
    });
  small = [await record(0, "0x01"), await record(1, "0x02")];
  large = await record(2, `0x${"ab".repeat(12_000)}`);
}, 60_000);

afterAll(async () => {
  await devnet?.stop();
});

describe("fetchTransactions", () => {
  it("splits batches whose answer is too large and leaves out a transaction too large alone", async () => {
    // What viem accepts of one answer, scaled down: the large transaction's calldata alone exceeds it.
    const client = createPublicClient({
      transport: http(devnet.rpcUrl, {
        batch: { batchSize: 500, wait: 0 },
        retryCount: 0,
        maxResponseBodySize: 10_000,
      }),
    });
    const unknown = keccak256(toHex("no such transaction"));
    const found = await fetchTransactions(client, [
      small[0]!.txHash,
      large.txHash,
      small[1]!.txHash,
      unknown,
    ]);

    expect([...found.keys()]).toEqual([small[0]!.txHash, small[1]!.txHash, unknown]);
    expect(found.get(unknown)).toBeNull();
    const tx = await devnet.client.getTransaction({ hash: small[1]!.txHash });
    expect(found.get(small[1]!.txHash)).toEqual({
      hash: small[1]!.txHash,
      blockHash: tx.blockHash,
      from: tx.from,
      to: tx.to,
      input: tx.input,
    });
    expect(getAddress(tx.to!)).toBe(devnet.addresses.attestationRegistry);
  });
});
