import type { ClientExtension, HTTPClientExtensionHooks } from "@x402/core/client";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { account, challenge, RESOURCE } from "../../test/proof-fixtures.ts";
import {
  type AttestationsApiStandIn,
  humanFromAddress,
  ownershipAttestation,
  startAttestationsApiStandIn,
} from "../../test/support/attestations-api-stand-in.ts";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "../common/constants.ts";
import { agentDidFromAddress } from "../server/verify-request.ts";
import { createHumanProofExtension, MissingAttestationsError } from "./extension.ts";
import { createAttestationAwareSelector } from "./selector.ts";

const paired = account(1);
const unpaired = account(2);
let api: AttestationsApiStandIn;

beforeAll(async () => {
  api = await startAttestationsApiStandIn({
    attestations: [ownershipAttestation(humanFromAddress(account(1000).address), paired.address)],
    nullifiers: {},
  });
});
afterAll(() => api.close());

const tier = (requiredAttestations?: string[], network = "eip155:45056"): PaymentRequirements => ({
  scheme: "exact",
  network: network as `${string}:${string}`,
  amount: "1",
  asset: "0x0000000000000000000000000000000000000001",
  payTo: "0x0000000000000000000000000000000000000002",
  maxTimeoutSeconds: 60,
  extra: requiredAttestations ? { requiredAttestations } : {},
});
const gated = tier([DEFAULT_AGENT_OWNERSHIP_SCHEMA]);

function paymentRequired(offered = challenge()): PaymentRequired {
  return {
    x402Version: 2,
    resource: { url: offered.info.uri ?? "", description: "", mimeType: "" },
    // Fresh objects per 402, as a transport decodes them from each response.
    accepts: [tier(), tier([DEFAULT_AGENT_OWNERSHIP_SCHEMA])],
    extensions: { "human-proof": offered },
  };
}
const payload = (accepted: PaymentRequirements): PaymentPayload => ({
  x402Version: 2,
  payload: {},
  accepted,
  extensions: { other: 1 },
});

/** What @x402/fetch does with a 402: the transport hook learns the URL that answered, then the payload is built. */
async function answer(
  extension: ClientExtension,
  accepted: PaymentPayload,
  required: PaymentRequired = paymentRequired(),
  requestUrl = RESOURCE,
) {
  const { http } = extension.transportHooks as { http: HTTPClientExtensionHooks };
  await http.onPaymentRequired?.(required.extensions?.["human-proof"], {
    paymentRequired: required,
    requestUrl,
  });
  return extension.enrichPaymentPayload?.(accepted, required);
}

describe("createHumanProofExtension (client)", () => {
  it("attaches the signed proof text to a tier with requiredAttestations", async () => {
    const extension = createHumanProofExtension(paired, { attestationsApiBaseUrl: api.attestationsUrl });
    const enriched = await answer(extension, payload(gated), paymentRequired());
    const proof = JSON.parse(enriched?.extensions?.["human-proof"] as string);
    expect(proof).toMatchObject({ address: paired.address, chainId: "eip155:45056", type: "eip191" });
    expect(enriched?.extensions?.other).toBe(1);
  });

  it("signs for the payment network when the challenge offers it, else the first eip191 chain", async () => {
    const offered = {
      ...challenge(),
      supportedChains: [
        { chainId: "eip155:6913", type: "eip191" as const },
        { chainId: "eip155:45056", type: "eip191" as const },
      ],
    };
    const extension = createHumanProofExtension(paired, { attestationsApiBaseUrl: api.attestationsUrl });
    const onPaymentNetwork = await answer(extension, payload(gated), paymentRequired(offered));
    expect(JSON.parse(onPaymentNetwork?.extensions?.["human-proof"] as string).chainId).toBe("eip155:45056");
    const otherNetwork = tier([DEFAULT_AGENT_OWNERSHIP_SCHEMA], "eip155:8453");
    const fallback = await answer(extension, payload(otherNetwork), paymentRequired(offered));
    expect(JSON.parse(fallback?.extensions?.["human-proof"] as string).chainId).toBe("eip155:6913");
  });

  it("leaves the standard tier and undeclared servers alone", async () => {
    const extension = createHumanProofExtension(unpaired, { attestationsApiBaseUrl: api.attestationsUrl });
    expect(await answer(extension, payload(tier()), paymentRequired())).toEqual(payload(tier()));
    const undeclared = { ...paymentRequired(), extensions: {} };
    expect(await answer(extension, payload(gated), undeclared)).toEqual(payload(gated));
  });

  it("refuses to sign for a tier whose schemas the agent lacks, unless a selector already chose it", async () => {
    const extension = createHumanProofExtension(unpaired, { attestationsApiBaseUrl: api.attestationsUrl });
    const attempt = answer(extension, payload(gated), paymentRequired());
    await expect(attempt).rejects.toBeInstanceOf(MissingAttestationsError);
    await expect(attempt).rejects.toMatchObject({
      attestationRequirements: [{ schemaId: DEFAULT_AGENT_OWNERSHIP_SCHEMA }],
    });
    const selector = createAttestationAwareSelector("did:unused");
    const withSelector = createHumanProofExtension(unpaired, { selector });
    const enriched = await answer(withSelector, payload(gated), paymentRequired());
    expect(typeof enriched?.extensions?.["human-proof"]).toBe("string");
  });

  it("refuses a challenge issued for another URL or domain than the one that answered 402", async () => {
    const extension = createHumanProofExtension(paired, { attestationsApiBaseUrl: api.attestationsUrl });
    // A third-party site relays the gateway's challenge to collect a proof it can spend there.
    const relayed = paymentRequired(
      challenge({ uri: "https://gateway.example/api/v1/weather", domain: "gateway.example" }),
    );
    await expect(answer(extension, payload(gated), relayed, "https://shop.example/buy")).rejects.toThrow(
      /not for the requested/,
    );
    const otherDomain = paymentRequired(challenge({ domain: "gateway.example" }));
    await expect(answer(extension, payload(gated), otherDomain)).rejects.toThrow(/domain/);
    // Without the transport's URL nothing is signed.
    await expect(extension.enrichPaymentPayload?.(payload(gated), paymentRequired())).rejects.toThrow(
      /transport/,
    );
    expect(await answer(extension, payload(gated), paymentRequired(), RESOURCE)).toBeDefined();
  });

  it("with a selector, pays the standard tier with a warning instead of refusing a challenge for another host", async () => {
    const selector = createAttestationAwareSelector(agentDidFromAddress(paired.address), undefined, {
      attestationsApiBaseUrl: api.attestationsUrl,
    });
    const warnings: string[] = [];
    const extension = createHumanProofExtension(paired, { selector, warn: (m) => warnings.push(m) });
    const { http } = extension.transportHooks as { http: HTTPClientExtensionHooks };
    // The agent asked for localhost; the server issued its challenge for 127.0.0.1.
    const required = paymentRequired(
      challenge({ uri: "http://127.0.0.1:4021/weather", domain: "127.0.0.1:4021" }),
    );
    await http.onPaymentRequired?.(required.extensions?.["human-proof"], {
      paymentRequired: required,
      requestUrl: "http://localhost:4021/weather",
    });
    expect(selector.selector(2, required.accepts)).toEqual(tier());
    expect(warnings).toEqual([expect.stringMatching(/standard tier.*not for the requested/)]);
    // The same agent, asked for the URL the challenge names, takes the discount.
    const matching = paymentRequired();
    await http.onPaymentRequired?.(matching.extensions?.["human-proof"], {
      paymentRequired: matching,
      requestUrl: RESOURCE,
    });
    expect(selector.selector(2, matching.accepts)).toEqual(gated);
  });
});
