import {
  getAttestation,
  identityFromAddress,
  mine,
  recordAttestation,
  registerSchema,
  revert,
  revokeAttestation,
  snapshot,
} from "@humanpass/devnet";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Indexer } from "../src/indexer.ts";
import { eventually, project, type Stack, startStack } from "./harness.ts";

let stack: Stack;
let indexer: Indexer;
let schemaId: Hex;

const attester = (n: number) => identityFromAddress(stack.devnet.accounts[n]!.address);
const agent = (n: number) => identityFromAddress(`0x${(0xa9e000 + n).toString(16).padStart(40, "0")}`);

async function record(n: number): Promise<Hex> {
  return (await recordAttestation(stack.devnet, { schemaId, attester: attester(1), recipient: agent(n) })).id;
}

/** Events once the relay has published everything the indexer committed. */
async function settledEvents() {
  const pending = async () =>
    Number(
      (
        await stack.db
          .selectFrom("outbox")
          .select((eb) => eb.fn.countAll().as("n"))
          .where("published_at", "is", null)
          .executeTakeFirstOrThrow()
      ).n,
    );
  await eventually(async () => (await pending()) === 0);
  const published = Number(
    (
      await stack.db
        .selectFrom("outbox")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  );
  await eventually(() => stack.collector.unique().length === published);
  return stack.collector.unique();
}

beforeAll(async () => {
  stack = await startStack("chain_indexer_reorg");
  schemaId = (await registerSchema(stack.devnet, { name: "Pairing", schema: "bytes data" })).id;
  // One log per commit: ranges end early and the rest of their logs is carried to the next step.
  indexer = stack.indexer({ confirmations: 3n, maxLogsPerCommit: 1 }).indexer;
});

afterAll(async () => {
  await stack?.close();
});

describe("reorganizations", () => {
  it("emits nothing from blocks a reorg shallower than the confirmation depth replaces", async () => {
    const { devnet } = stack;
    await mine(devnet, 3);
    await stack.drain(indexer);
    const id = await snapshot(devnet);
    const orphan = await record(1);
    await mine(devnet, 1); // the orphan is 2 blocks deep: not yet confirmed
    await stack.drain(indexer);
    await revert(devnet, id);
    const canonical = await record(2);
    await mine(devnet, 3);
    await stack.drain(indexer);

    const events = await settledEvents();
    const recorded = events.filter((e) => e.type === "attestation_recorded").map((e) => e.data.attestationId);
    expect(recorded).toEqual([canonical]);
    expect(recorded).not.toContain(orphan);
    expect(events.filter((e) => e.type === "blocks_reverted")).toEqual([]);
  });

  it("reverts orphaned records of a deeper reorg and converges to the canonical chain", async () => {
    const { devnet } = stack;
    const [canonical] = stack.collector
      .ofType("attestation_recorded")
      .map((e) => e.data.attestationId as Hex);
    const id = await snapshot(devnet);
    const doomed = await record(3);
    await revokeAttestation(devnet, canonical!);
    await mine(devnet, 4);
    await stack.drain(indexer);
    expect((await settledEvents()).map((e) => e.type)).toContain("attestation_revoked");

    await revert(devnet, id);
    const replacement = await record(4);
    await mine(devnet, 8);
    await stack.drain(indexer);

    const events = await settledEvents();
    const [reverted] = events.filter((e) => e.type === "blocks_reverted");
    expect(reverted!.data).toMatchObject({
      chainId: 45056,
      attestationIds: [doomed],
      revokedAttestationIds: [canonical],
      schemaIds: [],
    });
    const { attestations } = project(events);
    expect([...attestations.keys()].sort()).toEqual([canonical, replacement].sort());
    expect(attestations.get(canonical!).revocationTime).toBe(0);
    expect((await getAttestation(devnet, canonical!)).revocationTime).toBe(0n);
    await expect(getAttestation(devnet, doomed)).rejects.toThrow(/AttestationDoesNotExist/);
  });

  it("notices a reorg that leaves the chain shorter than what was indexed", async () => {
    const { devnet } = stack;
    const id = await snapshot(devnet);
    const doomed = await record(5);
    await mine(devnet, 6);
    await stack.drain(indexer);
    await revert(devnet, id);
    await mine(devnet, 1); // shorter than before: the indexed cursor block no longer exists
    await stack.drain(indexer);
    const later = await record(6);
    await mine(devnet, 3);
    await stack.drain(indexer);

    const events = await settledEvents();
    const reverts = events.filter((e) => e.type === "blocks_reverted");
    expect(reverts.at(-1)!.data.attestationIds).toEqual([doomed]);
    const { attestations, applied } = project(events);
    expect(attestations.has(doomed)).toBe(false);
    expect(attestations.has(later)).toBe(true);
    expect([...applied.values()].every((n) => n === 0 || n === 1)).toBe(true);
  });
});
