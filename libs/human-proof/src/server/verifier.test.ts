import { didFromAddress } from "@humanpass/identity";
import { privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AttestationsApiStandIn,
  humanFromAddress,
  ownershipAttestation,
  startAttestationsApiStandIn,
} from "../../test/support/attestations-api-stand-in.ts";
import {
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  DEFAULT_ATTESTATIONS_API_BASE_URL,
  DEFAULT_NULLIFIER_API_BASE_URL,
} from "../common/constants.ts";
import { createPoUVerifier } from "./verifier.ts";

const address = (n: number) => privateKeyToAddress(`0x${n.toString(16).padStart(64, "0")}`);
const human = humanFromAddress(address(1000));
const otherHuman = humanFromAddress(address(1001));
const pairedAgent = address(1);
const repairedAgent = address(2);
const agentWithoutNullifier = address(3);
const revokedAgent = address(4);
const agentWithNullNullifier = address(5);
const REVIEW_SCHEMA = `0x${"ab".repeat(32)}`;

let api: AttestationsApiStandIn;

beforeAll(async () => {
  const orphan = humanFromAddress(address(1002));
  const nullHuman = humanFromAddress(address(1003));
  api = await startAttestationsApiStandIn({
    attestations: [
      ownershipAttestation(human, pairedAgent, { creationTime: 1_700_000_000 }),
      // Three records over two pages: the most recent (by creationTime, not position) wins.
      ownershipAttestation(human, repairedAgent, { creationTime: 1_700_000_100 }),
      ownershipAttestation(otherHuman, repairedAgent, { creationTime: 1_700_000_300 }),
      ownershipAttestation(human, repairedAgent, { creationTime: 1_700_000_200 }),
      ownershipAttestation(orphan, agentWithoutNullifier),
      ownershipAttestation(human, revokedAgent, { revoked: true }),
      ownershipAttestation(nullHuman, agentWithNullNullifier),
      ownershipAttestation(human, pairedAgent, { schemaId: REVIEW_SCHEMA }),
    ],
    nullifiers: { [human.id]: "111", [otherHuman.id]: "222", [nullHuman.id]: null },
  });
});
afterAll(() => api.close());

const verifier = () =>
  createPoUVerifier({ attestationsApiBaseUrl: api.attestationsUrl, nullifierApiBaseUrl: api.nullifierUrl });

describe("createPoUVerifier", () => {
  it("uses Billions' production endpoints and ownership schema by default", () => {
    expect(DEFAULT_AGENT_OWNERSHIP_SCHEMA).toBe(
      "0xca354bee6dc5eded165461d15ccb13aceb6f77ebbb1fd3fe45aca686097f2911",
    );
    expect(DEFAULT_ATTESTATIONS_API_BASE_URL).toBe(
      "https://attestations-api.billions.network/api/v1/attestations",
    );
    expect(DEFAULT_NULLIFIER_API_BASE_URL).toBe("https://attestations-api.billions.network/api/v1/nullifier");
    expect(createPoUVerifier().ownershipSchema).toBe(DEFAULT_AGENT_OWNERSHIP_SCHEMA);
  });

  it("resolves a paired agent DID to its human", async () => {
    const did = didFromAddress(pairedAgent, "main");
    expect(await verifier().lookupHuman(did, "eip155:45056")).toEqual({
      humanId: "111",
      verifiedAt: new Date(1_700_000_000_000).toISOString(),
      attestationId: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      humanDid: human.did,
      humanAddress: human.address,
      agentDid: did,
      agentAddress: pairedAgent,
    });
    const listCall = api.requests.find((url) => url.searchParams.get("recipientDid") === did);
    expect(listCall?.searchParams.get("schemaId")).toBe(DEFAULT_AGENT_OWNERSHIP_SCHEMA);
  });

  it("takes the API's origin (attestationsApiUrl) and appends /api/v1 itself", async () => {
    const did = didFromAddress(pairedAgent, "main");
    const fromOrigin = createPoUVerifier({ attestationsApiUrl: new URL(api.baseUrl).origin });
    expect(await fromOrigin.lookupHuman(did, "eip155:45056")).toMatchObject({ humanId: "111" });
  });

  it("throws, never answers null, for an ownership record whose fromId is not a decimal iden3 ID", async () => {
    const did = didFromAddress(pairedAgent, "main");
    const [record] = (
      (await (await fetch(`${api.attestationsUrl}?recipientDid=${did}`)).json()) as {
        data: Record<string, unknown>[];
      }
    ).data;
    try {
      for (const fromId of [undefined, "", "0x2a"]) {
        api.answerWith({ data: [{ ...record, fromId }], nextPage: null });
        await expect(verifier().lookupHuman(did, "x")).rejects.toThrow(/malformed attestation/);
      }
    } finally {
      api.answerWith(undefined);
    }
  });

  it("follows nextPage and takes the most recent ownership record", async () => {
    const resolution = await verifier().lookupHuman(didFromAddress(repairedAgent, "main"), "eip155:45056");
    expect(resolution).toMatchObject({
      humanId: "222",
      humanDid: otherHuman.did,
      verifiedAt: "2023-11-14T22:18:20.000Z",
    });
  });

  it("returns null for a DID never paired, a revoked pairing, and a human whose nullifier is null", async () => {
    expect(await verifier().lookupHuman(didFromAddress(address(99), "main"), "eip155:45056")).toBeNull();
    expect(await verifier().lookupHuman(didFromAddress(revokedAgent, "main"), "eip155:45056")).toBeNull();
    expect(
      await verifier().lookupHuman(didFromAddress(agentWithNullNullifier, "main"), "eip155:45056"),
    ).toBeNull();
  });

  it("returns null when the nullifier endpoint answers 404 (no uniqueness verification known)", async () => {
    expect(await verifier().lookupHuman(didFromAddress(agentWithoutNullifier, "main"), "x")).toBeNull();
  });

  it("throws, never answers null, when the nullifier endpoint answers another error status", async () => {
    api.failWith(503, "/nullifier");
    try {
      await expect(verifier().lookupHuman(didFromAddress(pairedAgent, "main"), "x")).rejects.toThrow(/503/);
    } finally {
      api.failWith(null);
    }
  });

  it("throws when the API answers 503, and works again once it recovers", async () => {
    const did = didFromAddress(pairedAgent, "main");
    api.failWith(503);
    try {
      await expect(verifier().lookupHuman(did, "x")).rejects.toThrow(/503/);
      await expect(verifier().hasAttestation?.(did, "x", REVIEW_SCHEMA)).rejects.toThrow(/503/);
    } finally {
      api.failWith(null);
    }
    expect(await verifier().lookupHuman(did, "x")).toMatchObject({ humanId: "111" });
  });

  it("throws, never answers null, when the API answers 200 with a body it cannot read", async () => {
    const did = didFromAddress(pairedAgent, "main");
    try {
      for (const body of [{ data: "none" }, { items: [] }, { data: [{ id: "0x01" }] }, null]) {
        api.answerWith(body);
        await expect(verifier().lookupHuman(did, "x")).rejects.toThrow(/attestations API/);
      }
    } finally {
      api.answerWith(undefined);
    }
  });

  it("throws when the API is unreachable", async () => {
    const unreachable = createPoUVerifier({
      attestationsApiBaseUrl: "http://127.0.0.1:1/api/v1/attestations",
      nullifierApiBaseUrl: "http://127.0.0.1:1/api/v1/nullifier",
    });
    await expect(unreachable.lookupHuman(didFromAddress(pairedAgent, "main"), "x")).rejects.toThrow(
      /unreachable/,
    );
  });

  it("gives up after its request timeout", async () => {
    api.delay(500);
    try {
      const slow = createPoUVerifier({
        attestationsApiBaseUrl: api.attestationsUrl,
        nullifierApiBaseUrl: api.nullifierUrl,
        requestTimeoutMs: 50,
      });
      await expect(slow.lookupHuman(didFromAddress(pairedAgent, "main"), "x")).rejects.toThrow(/unreachable/);
    } finally {
      api.delay(0);
    }
  });

  it("checks extra schemas through the API, or through the hasAttestation override", async () => {
    const did = didFromAddress(pairedAgent, "main");
    expect(await verifier().hasAttestation?.(did, "x", REVIEW_SCHEMA)).toBe(true);
    expect(await verifier().hasAttestation?.(didFromAddress(repairedAgent, "main"), "x", REVIEW_SCHEMA)).toBe(
      false,
    );
    const seen: string[][] = [];
    const overridden = createPoUVerifier({
      attestationsApiBaseUrl: api.attestationsUrl,
      hasAttestation: async (...args) => {
        seen.push(args);
        return false;
      },
    });
    expect(await overridden.hasAttestation?.(did, "eip155:1", REVIEW_SCHEMA)).toBe(false);
    expect(seen).toEqual([[did, "eip155:1", REVIEW_SCHEMA]]);
  });
});
