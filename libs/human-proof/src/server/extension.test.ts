import { x402ResourceServer } from "@x402/core/server";
import type { PaymentRequiredContext, PaymentRequirements } from "@x402/core/types";
import { describe, expect, it } from "vitest";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "../common/constants.ts";
import type { HumanProofChallenge } from "../common/types.ts";
import { declareHumanProofExtension } from "./declare.ts";
import { createHumanProofExtension } from "./extension.ts";

const requirement = (network: string): PaymentRequirements => ({
  scheme: "exact",
  network: network as `${string}:${string}`,
  amount: "1",
  asset: "0x0000000000000000000000000000000000000001",
  payTo: "0x0000000000000000000000000000000000000002",
  maxTimeoutSeconds: 60,
  extra: {},
});

function paymentRequiredContext(networks: string[]): PaymentRequiredContext {
  const requirements = networks.map(requirement);
  const resourceInfo = { url: "https://api.example.com:8443/report?id=1", description: "", mimeType: "" };
  return {
    requirements,
    resourceInfo,
    paymentRequiredResponse: { x402Version: 2, resource: resourceInfo, accepts: requirements },
  };
}

async function issue(declaration: unknown, networks = ["eip155:45056", "eip155:45056", "solana:mainnet"]) {
  const extension = createHumanProofExtension();
  return (await extension.enrichPaymentRequiredResponse?.(
    declaration,
    paymentRequiredContext(networks),
  )) as HumanProofChallenge;
}

describe("createHumanProofExtension (server)", () => {
  it("issues a fresh challenge for the resource with the defaults of spec 3", async () => {
    const first = await issue(declareHumanProofExtension());
    const second = await issue(declareHumanProofExtension());
    expect(first).toEqual({
      info: {
        domain: "api.example.com",
        uri: "https://api.example.com:8443/report?id=1",
        version: "1",
        nonce: expect.stringMatching(/^[0-9a-f]{32}$/),
        issuedAt: expect.any(String),
        requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA],
        resources: ["https://api.example.com:8443/report?id=1"],
      },
      supportedChains: [{ chainId: "eip155:45056", type: "eip191" }],
      schema: expect.objectContaining({ type: "object" }),
    });
    expect(second.info.nonce).not.toBe(first.info.nonce);
    expect(Math.abs(Date.parse(first.info.issuedAt) - Date.now())).toBeLessThan(60_000);
  });

  it("applies the declared options, and keeps them for later 402s that receive the issued challenge", async () => {
    const declaration = declareHumanProofExtension({
      statement: "Prove a human stands behind you",
      expirationSeconds: 900,
      resourceUri: "https://public.example.com/report",
      domain: "public.example.com",
      version: "2",
      network: ["eip155:6913"],
    });
    const issued = await issue(declaration);
    expect(issued.info).toMatchObject({
      domain: "public.example.com",
      uri: "https://public.example.com/report",
      version: "2",
      statement: "Prove a human stands behind you",
      resources: ["https://public.example.com/report"],
    });
    expect(Date.parse(issued.info.expirationTime ?? "") - Date.parse(issued.info.issuedAt)).toBe(900_000);
    expect(issued.supportedChains).toEqual([{ chainId: "eip155:6913", type: "eip191" }]);
    const reissued = await issue(issued);
    expect(reissued.info).toMatchObject({
      domain: "public.example.com",
      statement: "Prove a human stands behind you",
    });
    expect(reissued.info.nonce).not.toBe(issued.info.nonce);
  });

  it("marks nonce, issuedAt and expirationTime as dynamic for x402's echo check", () => {
    const server = new x402ResourceServer();
    server.registerExtension(createHumanProofExtension());
    expect(server.getExtensions()[0].dynamicInfoFields).toEqual(["nonce", "issuedAt", "expirationTime"]);
  });

  it("refuses a non-positive expiration in the declaration", () => {
    expect(() => declareHumanProofExtension({ expirationSeconds: 0 })).toThrow(/expirationSeconds/);
  });
});
