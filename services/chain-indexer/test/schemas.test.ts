import { getLegacySchema, getSchema, mine, registerLegacySchema, registerSchema } from "@humanpass/devnet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type Stack, startStack } from "./harness.ts";

let stack: Stack;

beforeAll(async () => {
  stack = await startStack("chain_indexer_schemas");
});

afterAll(async () => {
  await stack?.close();
});

describe("schema_registered", () => {
  it("indexes both forms of the Registered event with what getSchema returns", async () => {
    const { devnet } = stack;
    const current = await registerSchema(devnet, {
      name: "Review",
      schema: "uint8 stars,string comment",
      userId: 7n,
    });
    const legacy = await registerLegacySchema(devnet, { schema: "bytes data", revocable: false, userId: 9n });
    await mine(devnet, 1);
    const { indexer } = stack.indexer();
    await stack.drain(indexer);

    const events = await eventually(() => {
      const found = stack.collector.ofType("schema_registered");
      return found.length === 2 && found;
    });
    const onChain = await getSchema(devnet, current.id);
    const onChainLegacy = await getLegacySchema(devnet, legacy.id);
    const block = await devnet.client.getBlock({ blockNumber: current.blockNumber });
    expect(events[0]!.data).toEqual({
      schemaId: onChain.id,
      name: "Review",
      schema: onChain.schema,
      resolver: onChain.resolver,
      revocable: onChain.revocable,
      registerer: devnet.accounts[0]!.address,
      registererIden3Id: "7",
      registry: devnet.addresses.schemaRegistry,
      blockTimestamp: Number(block.timestamp),
      chainId: 45056,
      blockNumber: Number(current.blockNumber),
      blockHash: block.hash,
      logIndex: 0,
      txHash: current.txHash,
    });
    expect(events[1]!.data).toMatchObject({
      schemaId: onChainLegacy.id,
      name: "",
      schema: "bytes data",
      revocable: false,
      registererIden3Id: "9",
      registry: devnet.addresses.legacySchemaRegistry,
      blockNumber: Number(legacy.blockNumber),
      txHash: legacy.txHash,
    });
    expect(events.map((e) => e.subject)).toEqual([current.id, legacy.id]);
    expect(events.every((e) => e.source === "chain-indexer")).toBe(true);
  });
});
