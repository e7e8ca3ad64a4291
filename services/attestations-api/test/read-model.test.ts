import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createCloudEvent, ensureStreams, jetstreamManager, streamName } from "@humanpass/event-bus";
import { REPO_ROOT } from "@humanpass/testing";
import { encodeAbiParameters } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rebuildReadModel } from "../src/reindex/rebuild.ts";
import {
  api,
  attestationRecorded,
  attestationRevoked,
  blocksReverted,
  CHAIN_ID,
  getJson,
  type Harness,
  logger,
  nextPosition,
  party,
  schemaRegistered,
  startHarness,
  uniquenessVerified,
} from "./support/harness.ts";

let h: Harness;
const listed = async (query = "") => (await getJson(h.app, api(`/attestations?page_size=100&${query}`))).body;
const single = async (id: string) => await getJson(h.app, api(`/attestations/${id}`));

beforeAll(async () => {
  h = await startHarness("att_read_model");
});
afterAll(async () => {
  await h?.close();
});

describe("consumers of chain and verifier events", () => {
  it("applies an event delivered twice (different message ids, same event id) once", async () => {
    const s = schemaRegistered();
    await h.publish("CHAIN", "schema_registered", s);
    const a = attestationRecorded(s.schemaId, party(), party());
    const id = await h.publish("CHAIN", "attestation_recorded", a);
    await h.publish("CHAIN", "attestation_recorded", a, { id });
    expect((await listed(`schemaId=${s.schemaId}`)).totalItems).toBe(1);
  });

  it("a revocation seen before its attestation still leaves it revoked", async () => {
    const s = schemaRegistered();
    await h.publish("CHAIN", "schema_registered", s);
    const to = party();
    const a = attestationRecorded(s.schemaId, party(), to);
    await h.publish(
      "CHAIN",
      "attestation_revoked",
      attestationRevoked(a.attestationId, to, { revocationTime: 1_777_000_000 }),
    );
    await h.publish("CHAIN", "attestation_recorded", a);
    expect((await listed(`schemaId=${s.schemaId}`)).totalItems).toBe(0);
    expect((await single(a.attestationId)).body).toMatchObject({
      revoked: true,
      revocationTime: 1_777_000_000,
    });
  });

  it("blocks_reverted drops records and revocations from its block on, of its chain only; re-indexed ones come back", async () => {
    const s = schemaRegistered();
    await h.publish("CHAIN", "schema_registered", s);
    const to = party();
    const kept = attestationRecorded(s.schemaId, party(), to);
    const revokedEarly = attestationRecorded(s.schemaId, party(), party());
    await h.publish("CHAIN", "attestation_recorded", kept);
    await h.publish("CHAIN", "attestation_recorded", revokedEarly);
    const forkBlock = nextPosition().blockNumber + 1;
    const orphan = attestationRecorded(s.schemaId, party(), to);
    const orphanSchema = schemaRegistered({ name: "Orphan" });
    const orphanRevocation = attestationRevoked(kept.attestationId, to);
    const survivingRevocation = attestationRevoked(revokedEarly.attestationId, party());
    // A revocation recorded before the fork stays; one recorded in an orphaned block is undone.
    await h.publish("CHAIN", "attestation_revoked", { ...survivingRevocation, blockNumber: forkBlock - 1 });
    for (const [type, data] of [
      ["attestation_recorded", orphan],
      ["schema_registered", orphanSchema],
      ["attestation_revoked", orphanRevocation],
    ] as const) {
      expect(data.blockNumber).toBeGreaterThanOrEqual(forkBlock);
      await h.publish("CHAIN", type, data);
    }
    const otherChain = attestationRecorded(s.schemaId, party(), to, {
      chainId: 6913,
      blockNumber: forkBlock + 50,
    });
    await h.publish("CHAIN", "attestation_recorded", otherChain);
    expect((await listed(`schemaId=${s.schemaId}`)).totalItems).toBe(2); // orphan + other chain; both others revoked

    await h.publish("CHAIN", "blocks_reverted", blocksReverted(forkBlock, { chainId: CHAIN_ID }));
    expect(ids(await listed(`schemaId=${s.schemaId}`))).toEqual([
      kept.attestationId,
      otherChain.attestationId,
    ]);
    expect((await single(orphan.attestationId)).status).toBe(404);
    expect((await single(kept.attestationId)).body).toMatchObject({ revoked: false, revocationTime: 0 });
    expect((await single(revokedEarly.attestationId)).body).toMatchObject({ revoked: true });
    expect((await getJson(h.app, api(`/schemas/${orphanSchema.schemaId}`))).status).toBe(404);

    const reindexed = { ...orphan, ...nextPosition() };
    await h.publish("CHAIN", "attestation_recorded", reindexed);
    expect(ids(await listed(`schemaId=${s.schemaId}`)).sort()).toEqual(
      [kept.attestationId, otherChain.attestationId, orphan.attestationId].sort(),
    );
  });

  it("schemaInfo follows the schemas: one registered after a lookup, and one indexed again at a new place after a reorg", async () => {
    const schemaInfo = async (schemaId: string) => {
      const { data } = await listed(`schemaId=${schemaId}`);
      expect(data).toHaveLength(1);
      const one = (await single(data[0].id)).body.schemaInfo;
      expect(one).toEqual(data[0].schemaInfo);
      return data[0].schemaInfo;
    };
    const placeOf = async (schemaId: string) =>
      (await getJson(h.app, api(`/schemas/${schemaId}`))).body.index;

    const first = schemaRegistered({ name: "First" });
    await h.publish("CHAIN", "schema_registered", first);
    await h.publish("CHAIN", "attestation_recorded", attestationRecorded(first.schemaId, party(), party()));
    expect(await schemaInfo(first.schemaId)).toMatchObject({
      name: "First",
      index: await placeOf(first.schemaId),
    });

    const later = schemaRegistered({ name: "Later", schema: "uint8 stars" });
    await h.publish("CHAIN", "schema_registered", later);
    await h.publish(
      "CHAIN",
      "attestation_recorded",
      attestationRecorded(later.schemaId, party(), party(), {
        data: encodeAbiParameters([{ type: "uint8" }], [5]),
      }),
    );
    expect(await schemaInfo(later.schemaId)).toEqual({
      index: String(Number(await placeOf(first.schemaId)) + 1),
      id: later.schemaId,
      name: "Later",
      schemaSignatures: [{ name: "stars", type: "uint8" }],
    });

    const forkBlock = nextPosition().blockNumber + 1;
    const moved = schemaRegistered({ name: "Moved", ...nextPosition() });
    const onMoved = attestationRecorded(moved.schemaId, party(), party());
    expect(moved.blockNumber).toBeGreaterThanOrEqual(forkBlock);
    await h.publish("CHAIN", "schema_registered", moved);
    await h.publish("CHAIN", "attestation_recorded", onMoved);
    const before = (await schemaInfo(moved.schemaId)).index;

    // The fork's canonical chain registers another schema first; Moved comes one place later.
    await h.publish("CHAIN", "blocks_reverted", blocksReverted(forkBlock, { chainId: CHAIN_ID }));
    await h.publish("CHAIN", "schema_registered", schemaRegistered({ name: "Canonical" }));
    await h.publish("CHAIN", "schema_registered", { ...moved, ...nextPosition() });
    await h.publish("CHAIN", "attestation_recorded", { ...onMoved, ...nextPosition() });
    const after = await schemaInfo(moved.schemaId);
    expect(after).toMatchObject({ name: "Moved", index: String(Number(before) + 1) });
    expect(after.index).toBe(await placeOf(moved.schemaId));
  });

  it("applies a revert by event order, not arrival order: a late revert spares records indexed after it, a late orphan is not written", async () => {
    const s = schemaRegistered();
    await h.publish("CHAIN", "schema_registered", s);
    // Ids as the indexer would have minted them, in emission order (UUIDv7 is time-ordered).
    const [orphanId, lateOrphanId, revertId, canonicalId] = [0, 1, 2, 3].map(
      () => createCloudEvent({ source: "test", type: "test", data: {} }).id,
    );
    const forkBlock = nextPosition().blockNumber + 1;
    const orphan = attestationRecorded(s.schemaId, party(), party(), { blockNumber: forkBlock });
    const lateOrphan = attestationRecorded(s.schemaId, party(), party(), { blockNumber: forkBlock + 1 });
    const canonical = { ...orphan, ...nextPosition(), blockNumber: forkBlock + 2 };

    // The re-indexed record arrives before the revert that was emitted ahead of it.
    await h.publish("CHAIN", "attestation_recorded", orphan, { id: orphanId });
    await h.publish("CHAIN", "attestation_recorded", canonical, { id: canonicalId });
    await h.publish("CHAIN", "blocks_reverted", blocksReverted(forkBlock), { id: revertId });
    expect(ids(await listed(`schemaId=${s.schemaId}`))).toEqual([orphan.attestationId]);
    expect((await single(orphan.attestationId)).body).toMatchObject({ txid: canonical.txHash });

    // An orphan emitted before the revert but delivered after it stays out.
    await h.publish("CHAIN", "attestation_recorded", lateOrphan, { id: lateOrphanId });
    expect((await single(lateOrphan.attestationId)).status).toBe(404);
    expect(ids(await listed(`schemaId=${s.schemaId}`))).toEqual([orphan.attestationId]);
  });

  it("keeps the first nullifier seen for a user", async () => {
    await h.publish("VERIFIER", "uniqueness_verified", uniquenessVerified("777", "111"));
    await h.publish("VERIFIER", "uniqueness_verified", uniquenessVerified("777", "222"));
    expect((await getJson(h.app, api("/nullifier?userId=777"))).body).toEqual({
      userId: "777",
      nullifier: "111",
    });
  });
});

function ids(body: { data: Array<{ id: string }> }) {
  return body.data.map((d) => d.id);
}

const execFileAsync = promisify(execFile);

describe("reindex", () => {
  async function snapshot() {
    return {
      attestations: await listed(),
      schemas: (await getJson(h.app, api("/schemas?page_size=100"))).body,
      nullifier: (await getJson(h.app, api("/nullifier?userId=777"))).body,
    };
  }

  it("rebuildReadModel empties the read model and replays both streams into the same answers", async () => {
    const before = await snapshot();
    expect(before.attestations.totalItems).toBeGreaterThan(0);
    for (const c of h.consumers) await c.stop();
    await h.db.deleteFrom("attestations").execute();
    await h.db.updateTable("schemas").set({ name: "tampered" }).execute();
    const result = await rebuildReadModel({
      db: h.db,
      nats: h.nats,
      topology: h.topology,
      logger,
      pollMs: 50,
    });
    expect(result.deadLettered).toBe(0);
    expect(await snapshot()).toEqual(before);
  });

  it("the CLI (npm run reindex) does the same from the environment, leaving the streams' configuration as it was", async () => {
    // Retention as an operator set it through the topology step: reindex must neither reset nor re-apply it.
    const jsm = await jetstreamManager(h.nats);
    await ensureStreams(jsm, h.topology, ["CHAIN", "VERIFIER"], {
      retention: {
        CHAIN: { maxAgeMs: 7 * 86_400_000, maxBytes: 64 * 1024 ** 2 },
        VERIFIER: { maxAgeMs: 3 * 86_400_000, maxBytes: 32 * 1024 ** 2 },
      },
    });
    const streamConfigs = async () =>
      Promise.all(
        (["CHAIN", "VERIFIER"] as const).map(
          async (s) => (await jsm.streams.info(streamName(h.topology, s))).config,
        ),
      );
    const configured = await streamConfigs();
    const before = await snapshot();
    await h.db.deleteFrom("nullifiers").execute();
    await h.db.deleteFrom("attestations").execute();
    const { stdout } = await execFileAsync(
      "npm",
      ["run", "-s", "-w", "@humanpass/attestations-api", "reindex"],
      {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          DATABASE_URL: h.database.url,
          EVENTS_PREFIX: h.topology.prefix,
          LOG_LEVEL: "info",
        },
        timeout: 120_000,
      },
    );
    expect(stdout).toContain("read model rebuilt");
    expect(await snapshot()).toEqual(before);
    expect(await streamConfigs()).toEqual(configured);
    expect(configured.map((c) => [c.max_age, c.max_bytes])).toEqual([
      [7 * 86_400_000 * 1_000_000, 64 * 1024 ** 2],
      [3 * 86_400_000 * 1_000_000, 32 * 1024 ** 2],
    ]);
  });
});
