import { describe, expect, it } from "vitest";
import type { AttestationsClient } from "./client.ts";
import { createHumanLookup } from "./lookup.ts";

const SCHEMA = `0x${"11".repeat(32)}`;
const AGENT = "0x1111111111111111111111111111111111111111";

function record(overrides: Record<string, unknown> = {}) {
  return {
    id: `0x${"ab".repeat(32)}`,
    creationTime: 1_700_000_000,
    fromId: "12345",
    fromDid: "did:iden3:billions:main:human",
    toDid: "did:iden3:billions:main:agent",
    fromEthereumAddress: "0x2222222222222222222222222222222222222222",
    toEthereumAddress: AGENT,
    schemaInfo: { name: "AgentOwnership" },
    ...overrides,
  };
}

/** The registry as a table, the way the client would have read it over HTTP. */
function registry(records: unknown[], nullifiers: Record<string, string | null>) {
  const asked: unknown[] = [];
  const client: AttestationsClient = {
    async listAttestations(schemaId, filter) {
      asked.push({ schemaId, ...filter });
      return records;
    },
    async hasAttestation() {
      return records.length > 0;
    },
    async nullifier(userId) {
      return nullifiers[userId] ?? null;
    },
  };
  return { client, asked };
}

describe("createHumanLookup", () => {
  it("resolves the most recent ownership record to its human's nullifier", async () => {
    const { client, asked } = registry(
      [record({ creationTime: 1_700_000_000 }), record({ creationTime: 1_700_000_300, fromId: "777" })],
      { "12345": "1", "777": "2" },
    );
    expect(await createHumanLookup(client, SCHEMA).byDid("did:iden3:billions:main:agent")).toEqual({
      humanId: "2",
      verifiedAt: "2023-11-14T22:18:20.000Z",
      attestationId: `0x${"ab".repeat(32)}`,
      humanDid: "did:iden3:billions:main:human",
      humanAddress: "0x2222222222222222222222222222222222222222",
      agentDid: "did:iden3:billions:main:agent",
      agentAddress: AGENT,
    });
    expect(asked).toEqual([{ schemaId: SCHEMA, recipientDid: "did:iden3:billions:main:agent" }]);
  });

  it("by address, keeps only records whose recipient address is that address", async () => {
    const { client } = registry(
      [record({ toEthereumAddress: "0x3333333333333333333333333333333333333333" })],
      {
        "12345": "1",
      },
    );
    expect(await createHumanLookup(client, SCHEMA).byAddress(AGENT)).toBeNull();
    const paired = registry([record()], { "12345": "1" });
    expect(
      await createHumanLookup(paired.client, SCHEMA).byAddress(AGENT.toUpperCase().replace("0X", "0x")),
    ).toMatchObject({ humanId: "1", agentAddress: AGENT });
  });

  it("answers null when no record is listed or the human has no nullifier", async () => {
    expect(await createHumanLookup(registry([], {}).client, SCHEMA).byDid("did:x")).toBeNull();
    expect(await createHumanLookup(registry([record()], {}).client, SCHEMA).byDid("did:x")).toBeNull();
  });

  it("throws, never answers null, for a record it cannot read: a missing field or a fromId that is not decimal", async () => {
    for (const bad of [
      record({ fromId: undefined }),
      record({ fromId: "0x3039" }),
      record({ creationTime: "1" }),
      null,
    ]) {
      await expect(
        createHumanLookup(registry([bad], { "12345": "1" }).client, SCHEMA).byDid("did:x"),
      ).rejects.toThrow(/attestations API sent a malformed attestation/);
    }
  });
});
