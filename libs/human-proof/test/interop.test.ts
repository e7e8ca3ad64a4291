/**
 * Wire compatibility with Billions' published packages, both directions:
 * @billionsnetwork/x402-human-proof-client 0.1.7 and @billionsnetwork/x402-human-proof-server 0.1.9.
 * The attestations API is the spec-2 stand-in of this folder (real HTTP on 127.0.0.1).
 */
import * as billionsClient from "@billionsnetwork/x402-human-proof-client";
import * as billionsServer from "@billionsnetwork/x402-human-proof-server";
import {
  buildDIDFromAddress,
  createHumanProofExtension as createClientExtension,
  signHumanProofChallengeEVM,
} from "@humanpass/human-proof/client";
import {
  createHumanProofExtension,
  createPoUVerifier,
  createVerifyHumanProofHook,
  DEFAULT_AGENT_OWNERSHIP_SCHEMA,
  declareHumanProofExtension,
  type HumanProofChallenge,
  verifyHumanProofRequest,
} from "@humanpass/human-proof/server";
import type { HTTPClientExtensionHooks } from "@x402/core/client";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { account, CHAIN, challenge } from "./proof-fixtures.ts";
import {
  type AttestationsApiStandIn,
  humanFromAddress,
  ownershipAttestation,
  startAttestationsApiStandIn,
} from "./support/attestations-api-stand-in.ts";

const RESOURCE = "https://api.example.com/weather?city=Oslo";
const agent = account(1);
const human = humanFromAddress(account(1000).address);
let api: AttestationsApiStandIn;

beforeAll(async () => {
  api = await startAttestationsApiStandIn({
    attestations: [ownershipAttestation(human, agent.address)],
    nullifiers: { [human.id]: "987654321" },
  });
});
afterAll(() => api.close());

const ours = () =>
  createPoUVerifier({ attestationsApiBaseUrl: api.attestationsUrl, nullifierApiBaseUrl: api.nullifierUrl });
const theirs = () =>
  billionsServer.createPoUVerifier({
    attestationsApiBaseUrl: api.attestationsUrl,
    nullifierApiBaseUrl: api.nullifierUrl,
  });

const gatedTier: PaymentRequirements = {
  scheme: "exact",
  network: CHAIN as `${string}:${string}`,
  amount: "500",
  asset: "0x0000000000000000000000000000000000000001",
  payTo: "0x0000000000000000000000000000000000000002",
  maxTimeoutSeconds: 60,
  extra: { requiredAttestations: [DEFAULT_AGENT_OWNERSHIP_SCHEMA] },
};

function paymentRequired(extension: unknown): PaymentRequired {
  return {
    x402Version: 2,
    resource: { url: RESOURCE, description: "", mimeType: "" },
    accepts: [gatedTier],
    extensions: { "human-proof": extension },
  };
}

function basePayload(): PaymentPayload {
  return {
    x402Version: 2,
    payload: { signature: "0x", authorization: { from: agent.address } },
    resource: { url: RESOURCE, description: "", mimeType: "" },
    accepted: gatedTier,
  };
}

async function challengeFrom(
  extension: { enrichPaymentRequiredResponse?: (d: unknown, c: never) => Promise<unknown> },
  declaration: unknown,
) {
  const required = paymentRequired(undefined);
  return (await extension.enrichPaymentRequiredResponse?.(declaration, {
    requirements: required.accepts,
    resourceInfo: required.resource,
    paymentRequiredResponse: required,
  } as never)) as HumanProofChallenge;
}

describe("interop with Billions' published packages", () => {
  it("derives the same agent DID", () => {
    expect(buildDIDFromAddress(agent.address)).toBe(billionsClient.buildDIDFromAddress(agent.address));
  });

  it("a proof signed by Billions' client verifies with our verifyHumanProofRequest", async () => {
    const theirChallenge = await challengeFrom(
      billionsServer.createHumanProofExtension(),
      billionsServer.declareHumanProofExtension({ statement: "Prove it", expirationSeconds: 900 }),
    );
    const proof = await billionsClient.signHumanProofChallengeEVM(theirChallenge, agent, CHAIN);
    const result = await verifyHumanProofRequest(ours(), { resource: RESOURCE, humanProofHeader: proof });
    expect(result).toMatchObject({
      allowed: true,
      did: buildDIDFromAddress(agent.address),
      resolution: { humanId: "987654321" },
    });
  });

  it("a proof signed by our client verifies with Billions' verifyHumanProofRequest, with the same result", async () => {
    const ourChallenge = await challengeFrom(
      createHumanProofExtension(),
      declareHumanProofExtension({ statement: "Prove it", expirationSeconds: 900 }),
    );
    const proof = await signHumanProofChallengeEVM(ourChallenge, agent, CHAIN, { resourceUrl: RESOURCE });
    const theirResult = await billionsServer.verifyHumanProofRequest(theirs(), {
      resource: RESOURCE,
      humanProofHeader: proof,
    });
    const ourResult = await verifyHumanProofRequest(ours(), { resource: RESOURCE, humanProofHeader: proof });
    expect(theirResult.allowed).toBe(true);
    expect(ourResult).toEqual(theirResult);
  });

  it("both clients produce the same proof text for the same challenge and key", async () => {
    const c = challenge({
      statement: "Same text",
      expirationTime: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(await signHumanProofChallengeEVM(c, agent, CHAIN, { resourceUrl: RESOURCE })).toBe(
      await billionsClient.signHumanProofChallengeEVM(c, agent, CHAIN),
    );
  });

  it("both verifiers resolve a DID to the same human", async () => {
    const did = buildDIDFromAddress(agent.address);
    expect(await ours().lookupHuman(did, CHAIN)).toEqual(await theirs().lookupHuman(did, CHAIN));
  });

  it("Billions' x402 client extension pays through our before-verify hook", async () => {
    const ourChallenge = await challengeFrom(createHumanProofExtension(), declareHumanProofExtension());
    const extension = billionsClient.createHumanProofExtension(agent, {
      attestationsApiBaseUrl: api.attestationsUrl,
    });
    const payload = await extension.enrichPaymentPayload(basePayload(), paymentRequired(ourChallenge));
    expect(typeof payload.extensions?.["human-proof"]).toBe("string");
    const hook = createVerifyHumanProofHook({ verifier: ours() });
    const verdict = await hook({
      paymentPayload: payload,
      requirements: gatedTier,
      declaredExtensions: { "human-proof": ourChallenge },
    });
    expect(verdict).toBeUndefined();
  });

  it("our x402 client extension pays through Billions' before-verify hook", async () => {
    const theirChallenge = await challengeFrom(
      billionsServer.createHumanProofExtension(),
      billionsServer.declareHumanProofExtension({}),
    );
    const extension = createClientExtension(agent, { attestationsApiBaseUrl: api.attestationsUrl });
    const required = paymentRequired(theirChallenge);
    // As @x402/fetch does: the transport hook learns which URL answered 402, then the payload is built.
    const { http } = extension.transportHooks as { http: HTTPClientExtensionHooks };
    await http.onPaymentRequired?.(theirChallenge, {
      paymentRequired: required,
      requestUrl: RESOURCE,
    });
    const payload = await extension.enrichPaymentPayload?.(basePayload(), required);
    const proof = payload?.extensions?.["human-proof"];
    expect(typeof proof).toBe("string");
    const hook = billionsServer.createVerifyHumanProofHook({ verifier: theirs() });
    expect(
      await hook({ paymentPayload: payload as PaymentPayload, requirements: gatedTier }),
    ).toBeUndefined();
  });

  it("both refuse the same malformed proofs with the same reasons", async () => {
    const valid = await signHumanProofChallengeEVM(challenge(), agent, CHAIN, { resourceUrl: RESOURCE });
    const cases: [string, string | null][] = [
      ["missing", null],
      ["not json", "{"],
      ["no address", JSON.stringify({ ...JSON.parse(valid), address: undefined })],
      ["no nonce", JSON.stringify({ ...JSON.parse(valid), nonce: undefined })],
      ["other uri", JSON.stringify({ ...JSON.parse(valid), uri: `${RESOURCE}/` })],
      ["bad issuedAt", JSON.stringify({ ...JSON.parse(valid), issuedAt: "never" })],
      ["expired", JSON.stringify({ ...JSON.parse(valid), expirationTime: "2020-01-01T00:00:00.000Z" })],
      ["eip1271", JSON.stringify({ ...JSON.parse(valid), type: "eip1271" })],
      ["other signer", JSON.stringify({ ...JSON.parse(valid), address: account(2).address })],
    ];
    for (const [, header] of cases) {
      const theirReason = (await billionsServer.verifyHumanProofRequest(theirs(), {
        resource: RESOURCE,
        humanProofHeader: header,
      })) as { reason?: string };
      const ourReason = (await verifyHumanProofRequest(ours(), {
        resource: RESOURCE,
        humanProofHeader: header,
      })) as { reason?: string };
      expect(ourReason.reason).toBe(theirReason.reason);
    }
  });
});
