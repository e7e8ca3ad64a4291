import { blockNumber, identityFromAddress, recordAttestation, registerSchema } from "@humanpass/devnet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type Stack, startStack } from "./harness.ts";

// The compose fault test once found its last attestation never served: the devnet mined a block only for a
// transaction, so the chain stopped at the block that recorded it, one block short of the indexer's confirmation
// depth. A devnet that produces blocks as a live chain does must carry the last transaction through.
let stack: Stack;

beforeAll(async () => {
  stack = await startStack("chain_indexer_live", { devnet: { blockIntervalSeconds: 1 } });
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

describe("a chain that keeps producing blocks", () => {
  it("publishes the attestation of the chain's last transaction once it is confirmed, with nothing sent after it", async () => {
    const { devnet } = stack;
    const { id: schemaId } = await registerSchema(devnet, { name: "Review", schema: "bytes data" });
    const { indexer } = stack.indexer({ confirmations: 2n });
    indexer.start();
    const last = await recordAttestation(devnet, {
      schemaId,
      attester: identityFromAddress(devnet.accounts[2]!.address),
      recipient: identityFromAddress(devnet.accounts[3]!.address),
    });

    await eventually(() => stack.collector.ofType("attestation_recorded").length === 1, 15_000);
    const [event] = stack.collector.ofType("attestation_recorded");
    expect(event!.data).toMatchObject({ attestationId: last.id, blockNumber: Number(last.blockNumber) });
    expect(await blockNumber(devnet)).toBeGreaterThanOrEqual(last.blockNumber + 2n);
  }, 30_000);
});
