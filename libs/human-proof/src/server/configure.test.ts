import { x402ResourceServer } from "@x402/core/server";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { describe, expect, it } from "vitest";
import type { HumanProofChallenge } from "../common/types.ts";
import { configureHumanProofServer } from "./configure.ts";
import { declareHumanProofExtension } from "./declare.ts";
import { HumanProofResourceServer } from "./resource-server.ts";
import { createPoUVerifier } from "./verifier.ts";

const CUSTOM_SCHEMA = `0x${"12".repeat(32)}`;

const paymentRequired: PaymentRequired = {
  x402Version: 2,
  resource: { url: "https://api.example.com/x", description: "", mimeType: "" },
  accepts: [],
  extensions: {
    "human-proof": { info: { domain: "api.example.com", nonce: "fresh" } },
    other: { info: { a: 1 } },
  },
};
const payload = (extensions: Record<string, unknown>): PaymentPayload => ({
  x402Version: 2,
  payload: {},
  accepted: {} as PaymentPayload["accepted"],
  extensions,
});

describe("configureHumanProofServer", () => {
  it("registers the extension with the verifier's ownership schema", async () => {
    const server = new HumanProofResourceServer();
    configureHumanProofServer(server, { verifierOptions: { agentOwnershipSchema: CUSTOM_SCHEMA } });
    const [extension] = server.getExtensions();
    const challenge = (await extension.enrichPaymentRequiredResponse?.(declareHumanProofExtension(), {
      requirements: [],
      resourceInfo: paymentRequired.resource,
      paymentRequiredResponse: paymentRequired,
    })) as HumanProofChallenge;
    expect(extension.key).toBe("human-proof");
    expect(challenge.info.requiredAttestations).toEqual([CUSTOM_SCHEMA]);
  });

  it("refuses an extension schema that differs from the verifier's", () => {
    const verifier = createPoUVerifier({ agentOwnershipSchema: CUSTOM_SCHEMA });
    expect(() =>
      configureHumanProofServer(new HumanProofResourceServer(), {
        verifier,
        extensionOptions: { agentOwnershipSchema: `0x${"34".repeat(32)}` },
      }),
    ).toThrow(/differs/);
  });

  it("leaves the human-proof echo to the hook and keeps x402's echo check for other extensions", () => {
    const server = new HumanProofResourceServer();
    configureHumanProofServer(server);
    expect(server.validateExtensions(paymentRequired, payload({ "human-proof": '{"nonce":"old"}' }))).toEqual(
      {
        valid: true,
      },
    );
    expect(server.validateExtensions(paymentRequired, payload({ other: { info: { a: 2 } } }))).toMatchObject({
      valid: false,
      extensionKey: "other",
    });
  });

  it("replaces nothing of the server it is given, and refuses a plain x402ResourceServer, whose echo check refuses every proof", () => {
    const server = new HumanProofResourceServer();
    const own = Object.getOwnPropertyNames(server);
    const validateExtensions = server.validateExtensions;
    configureHumanProofServer(server);
    expect(Object.getOwnPropertyNames(server)).toEqual(own);
    expect(server.validateExtensions).toBe(validateExtensions);
    expect(Object.hasOwn(server, "validateExtensions")).toBe(false);

    const plain = new x402ResourceServer();
    expect(() => configureHumanProofServer(plain)).toThrow(/HumanProofResourceServer/);
    expect(
      plain.validateExtensions(paymentRequired, payload({ "human-proof": '{"nonce":"old"}' })),
    ).toMatchObject({
      valid: false,
      extensionKey: "human-proof",
    });
  });
});
