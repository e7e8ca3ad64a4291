import {
  encodeSchemaData,
  identityFromAddress,
  mine,
  recordAttestations,
  registerSchema,
  revokeAttestations,
} from "@humanpass/devnet";
import { sampleValue } from "@humanpass/testing";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  expectedRecorded,
  project,
  readAttestations,
  type Stack,
  startStack,
} from "./harness.ts";
import { startFlakyRpcProxy } from "./rpc-proxy.ts";

let stack: Stack;
let proxy: Awaited<ReturnType<typeof startFlakyRpcProxy>>;
let ids: Hex[];
let revoked: Hex[];

beforeAll(async () => {
  stack = await startStack("chain_indexer_flaky");
  const { devnet } = stack;
  const { id: schemaId } = await registerSchema(devnet, {
    name: "Review",
    schema: "uint8 stars,string comment",
  });
  const attester = identityFromAddress(devnet.accounts[2]!.address);
  ids = (
    await recordAttestations(
      devnet,
      Array.from({ length: 300 }, (_, n) => ({
        schemaId,
        attester,
        recipient: identityFromAddress(`0x${(0xf1a000 + n).toString(16).padStart(40, "0")}`),
        data: encodeSchemaData("uint8 stars,string comment", [n % 6, `flaky ${n}`]),
      })),
      { batchSize: 10 },
    )
  ).map((r) => r.id);
  revoked = ids.filter((_, n) => n % 10 === 3);
  await revokeAttestations(devnet, revoked, { batchSize: 5 });
  await mine(devnet, 2);
  proxy = await startFlakyRpcProxy(devnet.rpcUrl, { failureRate: 0.2, maxLogRange: 8 });
});

afterAll(async () => {
  await proxy?.close();
  await stack?.close();
});

describe("an RPC that fails 20% of calls, answers some with 429 and refuses wide log ranges", () => {
  it("still delivers exactly the chain's records", async () => {
    const { indexer, metrics } = stack.indexer({ blockRange: 64n, readBatchSize: 25 }, proxy.url);
    indexer.start();
    await eventually(() => stack.collector.unique().length === 1 + ids.length + revoked.length, 120_000);
    await indexer.stop();

    const { attestations, applied } = project(stack.collector.unique());
    expect([...applied.values()].every((n) => n === 1)).toBe(true);
    for (const record of await readAttestations(stack.devnet, ids)) {
      expect(attestations.get(record.id)).toMatchObject({
        ...expectedRecorded(record),
        revocationTime: Number(record.revocationTime),
      });
    }
    expect(proxy.stats.rateLimited).toBeGreaterThan(0);
    expect(proxy.stats.refusedRanges).toBeGreaterThan(0);
    const exposition = await metrics.service.render();
    const errors = (reason: string) =>
      sampleValue(exposition, "humanpass_chain_indexer_rpc_errors_total", { reason });
    expect(errors("rate_limited")).toBeGreaterThan(0);
    expect(errors("http")).toBeGreaterThan(0);
  }, 180_000);
});
