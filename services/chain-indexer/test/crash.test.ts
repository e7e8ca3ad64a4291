import {
  encodeSchemaData,
  identityFromAddress,
  mine,
  recordAttestations,
  registerSchema,
} from "@humanpass/devnet";
import {
  freePort,
  type ServiceProcess,
  sampleValue,
  spawnServiceProcess,
  testNatsUrl,
} from "@humanpass/testing";
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

let stack: Stack;
let ids: Hex[];
let target: bigint;
const children: ServiceProcess[] = [];

function startIndexerProcess(port: number): ServiceProcess {
  const { devnet, database, topology } = stack;
  // One process (node running the TypeScript source), so SIGKILL kills the indexer itself and not a wrapper.
  const child = spawnServiceProcess({
    name: "chain-indexer",
    entry: "services/chain-indexer/src/main.ts",
    url: `http://127.0.0.1:${port}`,
    env: {
      DATABASE_URL: database.url,
      NATS_URL: testNatsUrl(),
      EVENTS_PREFIX: topology.prefix,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
      RPC_URL: devnet.rpcUrl,
      CHAIN_ID: "45056",
      ATTESTATION_REGISTRY_ADDRESS: devnet.addresses.attestationRegistry,
      SCHEMA_REGISTRY_ADDRESSES: `${devnet.addresses.schemaRegistry},${devnet.addresses.legacySchemaRegistry}`,
      CONFIRMATIONS: "1",
      // One block (10 records) per commit: many commits for the kill to land between.
      BLOCK_RANGE: "1",
      READ_BATCH_SIZE: "10",
      POLL_INTERVAL_MS: "100",
    },
    log: (line) => process.stdout.write(`${line}\n`),
  });
  children.push(child);
  return child;
}

async function cursorBlock(): Promise<bigint> {
  const row = await stack.db.selectFrom("cursor").select("block_number").executeTakeFirst();
  return row ? BigInt(row.block_number) : -1n;
}

beforeAll(async () => {
  stack = await startStack("chain_indexer_crash");
  const { devnet } = stack;
  const { id: schemaId } = await registerSchema(devnet, { name: "AgentOwnership", schema: "bytes data" });
  const attester = identityFromAddress(devnet.accounts[3]!.address);
  ids = (
    await recordAttestations(
      devnet,
      Array.from({ length: 1_000 }, (_, n) => ({
        schemaId,
        attester,
        recipient: identityFromAddress(`0x${(0xc0a000 + n).toString(16).padStart(40, "0")}`),
        data: encodeSchemaData("bytes data", ["0x"]),
      })),
      { batchSize: 10 },
    )
  ).map((r) => r.id);
  await mine(devnet, 1);
  target = (await devnet.client.getBlockNumber()) - 1n;
}, 300_000);

afterAll(async () => {
  for (const child of children) child.child.kill("SIGKILL");
  await stack?.close();
});

describe("SIGKILL during backfill", () => {
  it("resumes after a restart with every record delivered once and none missing", async () => {
    const first = startIndexerProcess(await freePort());
    const halfway = target / 2n;
    await eventually(async () => (await cursorBlock()) >= halfway / 2n, 120_000, 20);
    first.child.kill("SIGKILL");
    await first.exited;
    const killedAt = await cursorBlock();
    expect(killedAt).toBeLessThan(target);

    const port = await freePort();
    startIndexerProcess(port);
    await eventually(async () => (await cursorBlock()) >= target, 180_000, 100);
    await eventually(() => stack.collector.unique().length === 1 + ids.length, 60_000);

    const { attestations, applied } = project(stack.collector.unique());
    expect(applied.size).toBe(ids.length);
    expect([...applied.values()].every((n) => n === 1)).toBe(true);
    for (const record of await readAttestations(stack.devnet, ids)) {
      expect(attestations.get(record.id)).toMatchObject(expectedRecorded(record));
    }

    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(sampleValue(metrics, "humanpass_chain_indexer_indexed_block")).toBe(Number(target));
    expect(sampleValue(metrics, "humanpass_chain_indexer_head_lag_blocks")).toBeDefined();
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
  }, 300_000);
});
