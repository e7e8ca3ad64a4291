import { didFromAddress } from "@humanpass/identity";
import { describe, expect, it } from "vitest";
import { account, RESOURCE, registry, resolutionFor, sign, tamper } from "../../test/proof-fixtures.ts";
import type { HumanProofEvent } from "./types.ts";
import { parseHumanProofHeader, verifyHumanProofRequest } from "./verify-request.ts";

const agent = account(1);
const stranger = account(2);
const did = didFromAddress(agent.address, "main");
const verifier = registry({ [did]: resolutionFor(agent.address) });

async function reasonFor(header: string | null, resource = RESOURCE) {
  const result = await verifyHumanProofRequest(verifier, { resource, humanProofHeader: header });
  return result.allowed ? "allowed" : result.reason;
}

describe("verifyHumanProofRequest", () => {
  it("allows a proof signed by a paired agent and reports the human", async () => {
    const events: HumanProofEvent[] = [];
    const result = await verifyHumanProofRequest(verifier, {
      resource: RESOURCE,
      humanProofHeader: await sign(agent),
      onEvent: (event) => {
        events.push(event);
      },
    });
    expect(result).toEqual({
      allowed: true,
      did,
      chainId: "eip155:45056",
      resolution: resolutionFor(agent.address),
    });
    expect(events).toEqual([{ type: "human_verified", resource: RESOURCE, ...resolutionFor(agent.address) }]);
  });

  it("derives the DID from the recovered signer and never reads one sent by the caller", async () => {
    const claimingPaired = tamper(await sign(stranger), { did, agentDid: did });
    const events: HumanProofEvent[] = [];
    const result = await verifyHumanProofRequest(verifier, {
      resource: RESOURCE,
      humanProofHeader: claimingPaired,
      onEvent: (event) => {
        events.push(event);
      },
    });
    const strangerDid = didFromAddress(stranger.address, "main");
    expect(result).toEqual({ allowed: false, reason: "not_registered", did: strangerDid });
    expect(events).toEqual([{ type: "human_not_registered", resource: RESOURCE, did: strangerDid }]);
  });

  it("refuses a missing proof with missing_header", async () => {
    expect(await reasonFor(null)).toBe("missing_header");
    expect(await reasonFor("")).toBe("missing_header");
  });

  it("refuses text that is not a proof object with invalid_header", async () => {
    const proof = await sign(agent);
    expect(await reasonFor("{not json")).toBe("invalid_header");
    expect(await reasonFor("[1,2]")).toBe("invalid_header");
    for (const field of ["address", "signature", "chainId", "type"]) {
      expect(await reasonFor(tamper(proof, { [field]: undefined }))).toBe("invalid_header");
    }
    expect(await reasonFor(tamper(proof, { address: 42 }))).toBe("invalid_header");
  });

  it("refuses missing or malformed message fields with invalid_message", async () => {
    const proof = await sign(agent);
    for (const field of ["domain", "version", "nonce", "issuedAt"]) {
      expect(await reasonFor(tamper(proof, { [field]: undefined }))).toBe("invalid_message");
    }
    expect(await reasonFor(tamper(proof, { uri: "not a url" }), "not a url")).toBe("invalid_message");
    expect(await reasonFor(tamper(proof, { statement: "ok\nURI: https://evil.example" }))).toBe(
      "invalid_message",
    );
    expect(await reasonFor(tamper(proof, { resources: "https://api.example.com" }))).toBe("invalid_message");
  });

  it("refuses a missing or different signed uri with resource_mismatch", async () => {
    expect(await reasonFor(tamper(await sign(agent), { uri: undefined }))).toBe("resource_mismatch");
    expect(await reasonFor(await sign(agent), `${RESOURCE}&x=1`)).toBe("resource_mismatch");
    expect(await reasonFor(await sign(agent, { uri: "https://api.example.com/weather/" }))).toBe(
      "resource_mismatch",
    );
  });

  it("refuses unparseable dates and an expired message", async () => {
    expect(await reasonFor(await sign(agent, { issuedAt: "yesterday" }))).toBe("invalid_issued_at");
    expect(await reasonFor(await sign(agent, { issuedAt: "2026-01-01" }))).toBe("invalid_issued_at");
    expect(await reasonFor(await sign(agent, { expirationTime: "soon" }))).toBe("invalid_expiration_time");
    const past = new Date(Date.now() - 1000).toISOString();
    expect(await reasonFor(await sign(agent, { expirationTime: past }))).toBe("message_expired");
    const future = new Date(Date.now() + 60_000).toISOString();
    expect(await reasonFor(await sign(agent, { expirationTime: future }))).toBe("allowed");
  });

  it("refuses eip1271 and unknown signature types, and ed25519 which cannot yield an EVM DID", async () => {
    const proof = await sign(agent);
    expect(await reasonFor(tamper(proof, { type: "eip1271" }))).toBe("invalid_signature_type");
    expect(await reasonFor(tamper(proof, { type: "bls" }))).toBe("invalid_signature_type");
    expect(await reasonFor(tamper(proof, { type: "ed25519" }))).toBe("invalid_signature");
  });

  it("refuses signatures that do not recover to the claimed address with invalid_signature", async () => {
    const proof = await sign(agent);
    expect(await reasonFor(tamper(proof, { signature: "0x1234" }))).toBe("invalid_signature");
    expect(await reasonFor(tamper(proof, { signature: `0x${"00".repeat(65)}` }))).toBe("invalid_signature");
    expect(await reasonFor(tamper(proof, { address: stranger.address }))).toBe("invalid_signature");
    expect(await reasonFor(tamper(proof, { address: "not-an-address" }))).toBe("invalid_signature");
    expect(await reasonFor(tamper(proof, { statement: "a different text" }))).toBe("invalid_signature");
    expect(await reasonFor(tamper(proof, { chainId: "eip155:1" }))).toBe("invalid_signature");
  });

  it("accepts the claimed address in any letter case", async () => {
    const lower = { address: agent.address.toLowerCase(), signMessage: agent.signMessage };
    expect(await reasonFor(await sign(lower))).toBe("allowed");
  });

  it("throws when the registry cannot be read", async () => {
    const down = registry({});
    down.failing = true;
    await expect(
      verifyHumanProofRequest(down, { resource: RESOURCE, humanProofHeader: await sign(agent) }),
    ).rejects.toThrow(/503/);
  });
});

describe("parseHumanProofHeader", () => {
  it("reads the proof fields without verifying, and throws on text that is not a proof", async () => {
    const proof = await sign(agent, { nonce: "n-1" });
    expect(parseHumanProofHeader(proof)).toMatchObject({
      nonce: "n-1",
      address: agent.address,
      type: "eip191",
    });
    expect(() => parseHumanProofHeader("{")).toThrow();
    expect(() => parseHumanProofHeader(JSON.stringify({ nonce: "n-1" }))).toThrow(/address/);
  });
});
